"""``make demo ARGS=--queue``: a TFJob queued by Kueue, admitted, evicted and admitted again
elsewhere, run by the real operator to the end.

The local cluster (simulated kubelet: each container runs for a few seconds, then exits 0) has
two pools of nodes, Kueue's two flavours here: ``spot`` (tainted; only admitted jobs tolerate
it) and ``on-demand``. ``tf-operator`` runs as usual. The demo plays Kueue's kubeflow job
integration (:mod:`localcluster.kueue`, the same play the integration tests use) through the
SDK: its webhook creates the job suspended, so the operator gives it nothing; Kueue admits it on
``spot`` (``suspend: false``, the flavour's node selector and toleration merged into every
replica template), the pods run there and the job is Running, which is when Kueue counts its
pods ready; a higher-priority workload then preempts it: Kueue evicts it (``suspend: true``,
templates restored), the operator deletes its pods and services and marks it Suspended, with
nothing active and no failure, so Kueue releases its quota; Kueue admits it again on
``on-demand``, where it runs to Succeeded.

Everything started here is stopped on exit, Ctrl-C included. Exit code 0 only if the job
Succeeded where the second admission put it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from demokit.harness import BIN, Background, DemoError, run_steps
from demokit.tfjob import install_crd, start_operator
from localcluster import kueue
from localcluster.kueue import Conflict, Kueue, PodSetInfo, Workload

NS = "default"
JOB = "mnist"
QUEUE = "user-queue"
RUN_SECONDS = "5"  # each container's run: long enough to be evicted while it runs
SPOT_TOLERATION = {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
POOLS = (
    "name=spot,count=1,cpu=8,memory=16Gi,labels=pool=spot,taints=spot=true:NoSchedule",
    "name=on-demand,count=1,cpu=8,memory=16Gi,labels=pool=on-demand",
)
# Kueue's ResourceFlavors: the node labels and tolerations an admission to each brings.
FLAVOURS = {
    "spot": PodSetInfo(node_selector={"pool": "spot"}, tolerations=[SPOT_TOLERATION]),
    "on-demand": PodSetInfo(node_selector={"pool": "on-demand"}),
}


class SdkJobs:
    """:class:`localcluster.kueue.Jobs` over the SDK: the demo's Kueue talks to the API server
    as the real one does."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def get(self, namespace: str, name: str) -> dict[str, Any]:
        job: dict[str, Any] = self.client.get(name, namespace)
        return job

    def merge_patch(self, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        from tf_operator.sdk import Conflict as ApiConflict

        try:
            patched: dict[str, Any] = self.client.patch(name, patch, namespace, "merge")
        except ApiConflict as err:
            raise Conflict(str(err)) from err
        return patched


def tfjob() -> dict[str, Any]:
    """A v1.9-style TFJob sent to a Kueue LocalQueue."""

    def replica(replicas: int) -> dict[str, Any]:
        container = {
            "name": "tensorflow",
            "image": "kubeflow/tf-mnist-with-summaries:latest",
            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        }
        return {
            "replicas": replicas,
            "restartPolicy": "OnFailure",
            "template": {
                "metadata": {
                    "annotations": {"localcluster.tf-operator.io/run-seconds": RUN_SECONDS}
                },
                "spec": {"containers": [container]},
            },
        }

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": JOB, "namespace": NS, "labels": {kueue.QUEUE_LABEL: QUEUE}},
        "spec": {
            "runPolicy": {"cleanPodPolicy": "None"},
            "tfReplicaSpecs": {"PS": replica(1), "Worker": replica(2)},
        },
    }


def conditions(job: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (job.get("status") or {}).get("conditions") or []}


class Watcher:
    """Prints what changed since the last look: the job's conditions, pods bound and gone."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.started = time.monotonic()
        self.conditions: dict[str, str] = {}
        self.pods: dict[str, str] = {}  # pod name -> node, while it exists
        self.placements: list[tuple[str, str]] = []  # every (pod, node) seen, in order

    def say(self, text: str) -> None:
        print(f"  {time.monotonic() - self.started:5.1f}s  {text}", flush=True)

    def look(self) -> dict[str, Any]:
        job: dict[str, Any] = self.client.get(JOB, NS)
        for ctype, status in conditions(job).items():
            if self.conditions.get(ctype) != status:
                self.conditions[ctype] = status
                reason = next(
                    c.get("reason", "") for c in job["status"]["conditions"] if c["type"] == ctype
                )
                self.say(f"TFJob {JOB}: {ctype}={status} ({reason})")
        current = {}
        for pod in self.client.get_pods(JOB, NS):
            name, node = pod["metadata"]["name"], pod["spec"].get("nodeName") or ""
            if pod["metadata"].get("deletionTimestamp"):
                continue
            current[name] = node
            if node and self.pods.get(name) != node:
                self.placements.append((name, node))
                self.say(f"pod {name} -> {node}")
        for name in sorted(set(self.pods) - set(current)):
            self.say(f"pod {name} deleted")
        self.pods = current
        return job

    def until(self, done: Callable[[dict[str, Any]], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        pause = threading.Event()
        while not done(self.look()):
            if time.monotonic() > deadline:
                raise DemoError(f"timed out after {timeout:.0f}s waiting for {what}")
            pause.wait(0.1)  # polling interval of the display


def all_running_on(watcher: Watcher, pool: str) -> Callable[[dict[str, Any]], bool]:
    def check(job: dict[str, Any]) -> bool:
        on_pool = [n for n in watcher.pods.values() if n.startswith(f"{pool}-")]
        return len(on_pool) == 3 and kueue.pods_ready(job)

    return check


def admit(queue: Kueue, workload: Workload, flavour: str, watcher: Watcher) -> None:
    info = FLAVOURS[flavour]
    tolerations = ", ".join(f"{t['key']}={t['value']}:{t['effect']}" for t in info.tolerations)
    queue.admit(workload, [info for _ in workload.pod_sets])
    brought = f"nodeSelector pool={flavour}" + (
        f", toleration {tolerations}" if tolerations else ""
    )
    watcher.say(
        f"Kueue admits {JOB} on flavour {flavour}: suspend false; {brought} merged into "
        + ", ".join(workload.pod_set_names)
    )


def story(client: Any, timeout: float) -> int:
    queue = Kueue(SdkJobs(client))
    client.create(kueue.default_on_create(tfjob()))
    print(
        f"submitted TFJob {JOB} to LocalQueue {QUEUE}; Kueue's webhook made it "
        "runPolicy.suspend: true"
    )
    watcher = Watcher(client)
    watcher.until(lambda j: conditions(j).get("Suspended") == "True", timeout, "Suspended")
    watcher.say(f"the operator created nothing: {len(watcher.pods)} pods")
    workload = queue.workload(NS, JOB)
    sets = ", ".join(f"{p.name} x{p.count}" for p in workload.pod_sets)
    watcher.say(f"Kueue made the Workload: pod sets {sets}")

    admit(queue, workload, "spot", watcher)
    watcher.until(all_running_on(watcher, "spot"), timeout, "the pods running on spot")
    watcher.say("Kueue: pods ready (Running=True)")

    queue.evict(workload)
    watcher.say(
        f"a higher-priority workload preempts it: Kueue evicts {JOB}: suspend true; "
        "the templates restored"
    )

    def stopped(job: dict[str, Any]) -> bool:
        return conditions(job).get("Suspended") == "True" and not watcher.pods

    watcher.until(stopped, timeout, "the pods deleted")
    job = watcher.look()
    if kueue.is_active(job) or kueue.finished(job).finished:
        raise DemoError(f"the evicted job should be inactive and unfinished: {job['status']}")
    watcher.say("nothing active, not failed: Kueue releases its quota")

    admit(queue, workload, "on-demand", watcher)
    watcher.until(lambda j: kueue.finished(j).finished, timeout, "the job to finish")
    final = watcher.look()
    _, success, message = kueue.finished(final)
    watcher.say(f"Kueue: finished, {'success' if success else 'failure'}: {message}")

    print("\nwhere the pods ran:")
    for pod, node in watcher.placements:
        print(f"  {pod:<16} {node}")
    print("\nconditions:")
    for c in final["status"]["conditions"]:
        print(f"  {c['type']:<10} {c['status']:<6} {c.get('reason', '')}")
    last = {pod: node for pod, node in watcher.placements}
    ended_on_demand = all(node.startswith("on-demand-") for node in last.values())
    return 0 if success and ended_on_demand else 1


def run(args: argparse.Namespace, workdir: Path, started: list[Background]) -> int:
    from tf_operator.sdk import TFJobClient

    argv = [str(BIN / "tf-operator-localcluster"), "--kubelet=simulated", "--port=0"]
    argv += [f"--kubeconfig={workdir / 'kubeconfig'}"]
    argv += [f"--node-pool={pool}" for pool in POOLS]
    cluster = Background("local cluster", argv, workdir / "cluster.log", stdout_pipe=True)
    started.append(cluster)
    line = cluster.read_line(timeout=60)
    if not line.startswith("ready "):
        raise DemoError(f"local cluster did not start: {line!r}\n{cluster.tail()}")
    _, url, kubeconfig = line.split()
    print(
        f"local cluster ready at {url}: simulated kubelet, node pools spot (tainted) and on-demand"
    )
    client = TFJobClient(kubeconfig)
    install_crd(client.kube)
    started.append(start_operator(workdir, kubeconfig))
    return story(client, args.timeout)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--queue", action="store_true", required=True)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds each step may take")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    begin = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="queue-demo-"))
    code = run_steps(lambda started: run(args, workdir, started), workdir, args.keep)
    verdict = "job Succeeded" if code == 0 else f"exit code {code}"
    print(f"\n{verdict}; demo took {time.monotonic() - begin:.1f}s")
    return code


if __name__ == "__main__":
    sys.exit(main())
