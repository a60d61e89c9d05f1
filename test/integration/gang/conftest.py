"""Gang scheduling end to end: a local cluster running a batch scheduler, the real
``tf-operator`` binary (this repo's console script) started with ``--enable-gang-scheduling``.

``start_operator(cluster, *flags)`` runs the binary against the cluster's kubeconfig and stops
it after the test; its log is kept under the test's tmp_path. ``control_plane`` is the control
plane of a test that starts its own cluster (ids ``emulated`` and ``real``); module-scoped cluster
fixtures take ``params=BACKENDS`` themselves. Tests talk through ``cluster.client``, the same on
both control planes; the helpers below take it (or the emulator's registry).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.nodepool import NodePool
from localcluster.testing import BACKENDS, wait_for
from support.crd import crd_objects
from support.operator_process import OperatorProcess

ROOT = Path(__file__).resolve().parents[3]
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
EVENTS = ("", "v1", "events")


@pytest.fixture
def start_operator(tmp_path) -> Iterator:
    started: list[OperatorProcess] = []

    def start(cluster, *flags: str) -> OperatorProcess:
        log = tmp_path / f"operator-{len(started)}.log"
        operator = OperatorProcess(cluster.kubeconfig, log, ["--no-leader-elect", *flags])
        started.append(operator)
        return operator

    yield start
    for operator in started:
        operator.stop()


@pytest.fixture(params=BACKENDS)
def control_plane(request) -> str:
    """The control plane of a cluster the test starts itself."""
    return str(request.param)


@contextlib.contextmanager
def volcano_on_two_cpus(start_operator, control_plane: str = "emulated") -> Iterator[LocalCluster]:
    """A simulated cluster of one 2-CPU node under Volcano on that control plane, the
    CRDs installed and the operator gang-scheduling with Volcano."""
    with LocalCluster(
        control_plane=control_plane,
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=[NodePool("n", cpu="2", memory="8Gi")],
        batch_schedulers=("volcano",),
        batch_schedule_period=0.2,
        crds=crd_objects(),
    ) as cluster:
        start_operator(cluster, "--enable-gang-scheduling=true", "--gang-scheduler-name=volcano")
        yield cluster


def gang_too_big_for_it(name: str) -> dict:
    """A TFJob of two workers asking 2 CPUs each: never placed on :func:`volcano_on_two_cpus`."""
    container = {"name": "tensorflow", "image": "x", "resources": {"requests": {"cpu": "2"}}}
    worker = {"replicas": 2, "template": {"spec": {"containers": [container]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {"tfReplicaSpecs": {"Worker": worker}},
    }


def events_about(client, name: str, kind: str | None = None) -> list[dict]:
    items = client.list(EVENTS, "default")[0]
    return [
        e
        for e in items
        if e["involvedObject"].get("name") == name
        and (kind is None or e["involvedObject"].get("kind") == kind)
    ]


def tfjob_condition(client, name: str, ctype: str) -> dict | None:
    job = client.get(TFJOBS, "default", name)
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond["type"] == ctype and cond["status"] == "True":
            return cond
    return None


def event_source(event: dict) -> str:
    """Who reported a core/v1 event: ``source.component``, or ``reportingComponent`` for one
    written through events.k8s.io/v1 (kube-scheduler's, on the real control plane)."""
    return (event.get("source") or {}).get("component") or event.get("reportingComponent") or ""


__all__ = [
    "BACKENDS",
    "event_source",
    "events_about",
    "gang_too_big_for_it",
    "tfjob_condition",
    "volcano_on_two_cpus",
    "wait_for",
]
