"""``tf-operator-localcluster``: serve a LocalCluster until SIGTERM/SIGINT.

Prints exactly one line, ``ready <url> <kubeconfig>``, on stdout once the API
server answers and the nodes are registered; all logs go to stderr. On
SIGTERM or SIGINT every pod process is killed, the server stops and the
command exits 0.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import Any

import click

from localcluster.batchscheduler.flavours import FLAVOURS
from localcluster.cluster import (
    CONTROL_PLANES,
    KUBELET_MODES,
    LocalCluster,
    NodeSpec,
    SimulatedTiming,
)
from localcluster.controlplane.real import ControlPlaneUnavailable
from localcluster.coscheduling.plugin import CoschedulingArgs
from localcluster.kubelet.dns import DNS_MODES
from localcluster.kubelet.images import LocalImage, parse_image_option
from localcluster.nodepool import NodePool, parse_node_pool

logger = logging.getLogger(__name__)


def parse_labels(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` -> dict; raises click.BadParameter on malformed input."""
    labels: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected key=value, got {item!r}")
        labels[key] = value
    return labels


def node_pools_option(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> list[NodePool]:
    try:
        return [parse_node_pool(v) for v in values]
    except ValueError as err:
        raise click.BadParameter(str(err)) from err


def flavour_confs_option(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    confs = {}
    for value in values:
        flavour, sep, path = value.partition("=")
        if not sep or flavour not in FLAVOURS or not path:
            raise click.BadParameter(f"expected FLAVOUR=PATH with FLAVOUR in {sorted(FLAVOURS)}")
        confs[flavour] = path
    return confs


def coscheduling_args_option(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    args: dict[str, str] = {}
    for value in values:
        key, sep, number = value.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}")
        args[key] = number
    try:
        CoschedulingArgs.parse(dict(args))
    except ValueError as err:
        raise click.BadParameter(str(err)) from err
    return args


def seconds_option(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    try:
        return float(value[:-1]) if value.endswith("s") else float(value)
    except ValueError as err:
        raise click.BadParameter(f"expected seconds like 1s or 0.5, got {value!r}") from err


def parse_images(values: tuple[str, ...]) -> list[tuple[str, LocalImage]]:
    try:
        return [parse_image_option(v) for v in values]
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--image") from err


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=0, show_default=True, help="Port; 0 picks a free one.")
@click.option(
    "--kubeconfig",
    "kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a kubeconfig for the cluster here (default: in the state dir).",
)
@click.option(
    "--control-plane",
    type=click.Choice(CONTROL_PLANES),
    default="emulated",
    show_default=True,
    envvar="LOCALCLUSTER_CONTROL_PLANE",
    help="emulated: the API-server emulator in this process; real: etcd, kube-apiserver, "
    "kube-controller-manager and kube-scheduler (built from Kubernetes' Go modules on first "
    "use: needs Go and the Go module proxy), our kubelets and schedulers attached over HTTPS. "
    "--host, --port, --tls, --token, --insecure, --authorization-mode and --watch-history "
    "shape the emulator only.",
)
@click.option(
    "--kubelet",
    type=click.Choice(KUBELET_MODES),
    default="process",
    show_default=True,
    help="none: no nodes; simulated: timer pods; process: real local processes.",
)
@click.option("--nodes", default=1, show_default=True, help="Number of nodes.")
@click.option("--node-cpu", default="8", show_default=True, help="CPU capacity per node.")
@click.option("--node-memory", default="32Gi", show_default=True, help="Memory per node.")
@click.option("--node-gpus", default=0, show_default=True, help="nvidia.com/gpu per node.")
@click.option("--node-pods", default=110, show_default=True, help="Max pods per node.")
@click.option("--node-labels", default="", help="Extra node labels, k=v,k2=v2.")
@click.option(
    "--node-pool",
    "node_pools",
    multiple=True,
    callback=node_pools_option,
    help="A pool of nodes <name>-<i>, replacing --nodes; repeatable: "
    "name=gpu,count=2,cpu=8,memory=32Gi,gpus=1,pods=110,labels=k=v;k2=v2,taints=k=v:NoSchedule",
)
@click.option(
    "--batch-scheduler",
    "batch_schedulers",
    multiple=True,
    type=click.Choice(sorted(FLAVOURS)),
    help="Also run this gang scheduler for pods naming it; repeatable.",
)
@click.option(
    "--batch-scheduler-conf",
    "batch_scheduler_conf",
    multiple=True,
    callback=flavour_confs_option,
    help="FLAVOUR=PATH of a kube-batch/Volcano scheduler configuration file; repeatable.",
)
@click.option(
    "--batch-schedule-period",
    default="1s",
    show_default=True,
    callback=seconds_option,
    help="Seconds between batch scheduling cycles.",
)
@click.option(
    "--scheduler-plugins",
    is_flag=True,
    help="Also run scheduler-plugins: the coscheduling scheduler (schedulerName "
    "scheduler-plugins-scheduler) and the PodGroup controller, with their PodGroup CRD.",
)
@click.option(
    "--coscheduling-arg",
    "coscheduling_args",
    multiple=True,
    callback=coscheduling_args_option,
    help="An argument of the Coscheduling plugin, repeatable: permitWaitingTimeSeconds=10, "
    "podGroupBackoffSeconds=0 (the defaults).",
)
@click.option(
    "--watch-history",
    default=10000,
    show_default=True,
    help="Events kept for watch resumption (older RVs get 410).",
)
@click.option("--tls", is_flag=True, help="Serve HTTPS with a self-signed certificate.")
@click.option(
    "--token",
    default=None,
    help="Admin bearer token, enforced on every request (kubectl sends it only with --tls).",
)
@click.option(
    "--insecure",
    is_flag=True,
    help="Allow an open API server (no token) on a non-loopback --host.",
)
@click.option(
    "--authorization-mode",
    type=click.Choice(["RBAC", "AlwaysAllow"]),
    default="RBAC",
    show_default=True,
    help="AlwaysAllow skips RBAC for service-account requests (benchmarks only).",
)
@click.option(
    "--sim-start-delay",
    default=0.5,
    show_default=True,
    help="Simulated kubelet: seconds from binding to Running.",
)
@click.option(
    "--sim-restart-delay",
    default=0.5,
    show_default=True,
    help="Restart back-off: the wait before a crashing container's second restart, doubling "
    "after each restart (both kubelets; a real kubelet uses 10 s).",
)
@click.option(
    "--restart-backoff-max",
    default=15.0,
    show_default=True,
    help="Cap of the restart back-off (a real kubelet uses 300 s).",
)
@click.option(
    "--sim-run-seconds",
    default=None,
    type=float,
    help="Simulated kubelet: default run time; unset means run until deleted.",
)
@click.option(
    "--dns",
    type=click.Choice(DNS_MODES),
    default="auto",
    show_default=True,
    help="Process kubelet: how pods resolve service names.",
)
@click.option(
    "--cluster-domain",
    "cluster_domains",
    multiple=True,
    default=("cluster.local",),
    show_default=True,
    help="DNS domain(s) after <svc>.<ns>.svc; repeatable.",
)
@click.option(
    "--state-dir",
    default=None,
    type=click.Path(file_okay=False),
    help="Where logs and hosts files go (default: a temporary directory).",
)
@click.option(
    "--image",
    "images",
    multiple=True,
    metavar="IMAGE=EXECUTABLE",
    help="Process kubelet: run containers of IMAGE (any tag) as EXECUTABLE; repeatable. "
    "Images declared by installed distributions are known without this.",
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
)
def main(**options: Any) -> None:
    """Run a local Kubernetes cluster (API server emulator, nodes, scheduler, kubelets)."""
    logging.basicConfig(
        level=options["log_level"].upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    cluster = LocalCluster(
        control_plane=options["control_plane"],
        kubelet=options["kubelet"],
        nodes=options["nodes"],
        host=options["host"],
        port=options["port"],
        kubeconfig=options["kubeconfig"],
        watch_history=options["watch_history"],
        tls=options["tls"],
        token=options["token"],
        insecure=options["insecure"],
        authorization_mode=options["authorization_mode"],
        node=NodeSpec(
            cpu=options["node_cpu"],
            memory=options["node_memory"],
            gpus=options["node_gpus"],
            pods=options["node_pods"],
            labels=parse_labels(options["node_labels"]),
        ),
        simulated=SimulatedTiming(
            start_delay=options["sim_start_delay"],
            restart_delay=options["sim_restart_delay"],
            max_restart_delay=options["restart_backoff_max"],
            default_run_seconds=options["sim_run_seconds"],
        ),
        dns=options["dns"],
        cluster_domains=tuple(options["cluster_domains"]),
        state_dir=options["state_dir"],
        node_pools=options["node_pools"],
        batch_schedulers=tuple(options["batch_schedulers"]),
        batch_scheduler_conf=options["batch_scheduler_conf"],
        batch_schedule_period=options["batch_schedule_period"],
        scheduler_plugins=options["scheduler_plugins"],
        coscheduling_args=options["coscheduling_args"],
        images=dict(parse_images(options["images"])),
    )
    if options["token"] and not options["tls"]:
        logger.warning("--token without --tls: kubectl sends bearer tokens only over HTTPS")
    try:
        cluster.start()
    except ValueError as err:
        raise click.UsageError(str(err)) from err
    except ControlPlaneUnavailable as err:
        raise click.ClickException(str(err)) from err
    try:
        sys.stdout.write(f"ready {cluster.url} {cluster.kubeconfig}\n")
        sys.stdout.flush()
        while not stop.wait(1.0):
            pass
        logger.info("stopping local cluster")
    finally:
        cluster.stop()
