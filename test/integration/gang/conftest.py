"""Gang scheduling end to end: a local cluster running a batch scheduler, the real
``tf-operator`` binary (this repo's console script) started with ``--enable-gang-scheduling``.

``start_operator(cluster, *flags)`` runs the binary against the cluster's kubeconfig and stops
it after the test; its log is kept under the test's tmp_path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.nodepool import NodePool
from localcluster.testing import wait_for
from support.crd import install_crds
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


@contextlib.contextmanager
def volcano_on_two_cpus(start_operator) -> Iterator[LocalCluster]:
    """A simulated cluster of one 2-CPU node under Volcano, the CRDs installed and the operator
    gang-scheduling with Volcano."""
    with LocalCluster(
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=[NodePool("n", cpu="2", memory="8Gi")],
        batch_schedulers=("volcano",),
        batch_schedule_period=0.2,
    ) as cluster:
        install_crds(cluster.registry)
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


def events_about(registry, name: str, kind: str | None = None) -> list[dict]:
    items, _ = registry.list(EVENTS, "default")
    return [
        e
        for e in items
        if e["involvedObject"].get("name") == name
        and (kind is None or e["involvedObject"].get("kind") == kind)
    ]


def tfjob_condition(registry, name: str, ctype: str) -> dict | None:
    job = registry.get(TFJOBS, "default", name)
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond["type"] == ctype and cond["status"] == "True":
            return cond
    return None


__all__ = [
    "events_about",
    "gang_too_big_for_it",
    "tfjob_condition",
    "volcano_on_two_cpus",
    "wait_for",
]
