"""Queue admission that works (issue 22, item 4): the test plays Kueue's kubeflow job
integration (``support.kueue``) against the real operator on the simulated cluster. A job is
created suspended and gets nothing; admitted on one pool of nodes it runs; evicted while
running it loses its pods and services, reports nothing active and does not fail; admitted
again on another pool (a tainted one, the admission bringing the toleration) its new pods
carry the new node selector and run there to Succeeded. The same with a TTL and an active
deadline set (neither fires across the eviction), and with Volcano gang scheduling."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.nodepool import NodePool
from localcluster.testing import wait_for
from support.crd import install_crds
from support.kueue import Admitter, PodSetInfo

from .conftest import EVENTS, NS, PODS, SERVICES, TFJOBS

pytestmark = pytest.mark.integration

RUN = "localcluster.tf-operator.io/run-seconds"
TAINT = {"key": "dedicated", "value": "b", "effect": "NoSchedule"}
POOLS = [
    NodePool("a", labels={"pool": "a"}),
    NodePool("b", labels={"pool": "b"}, taints=[TAINT]),
]
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "b", "effect": "NoSchedule"}
VOLCANO_PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with LocalCluster(
        kubelet="simulated", simulated=SimulatedTiming(start_delay=0.1), node_pools=POOLS
    ) as c:
        install_crds(c.registry)
        yield c


def queued_job(name: str, **run_policy: Any) -> dict[str, Any]:
    """A job Kueue's webhook would have suspended at creation; its pods run until deleted
    unless an admission says otherwise."""

    def replica(replicas: int) -> dict[str, Any]:
        container = {"name": "tensorflow", "image": "localcluster/none"}
        return {"replicas": replicas, "template": {"spec": {"containers": [container]}}}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
        "spec": {
            "runPolicy": {"suspend": True, **run_policy},
            "tfReplicaSpecs": {"PS": replica(1), "Worker": replica(2)},
        },
    }


def on_pool(pool: str, finish_in: str | None = None) -> dict[str, PodSetInfo]:
    """An admission to the nodes of ``pool`` (its flavour), for both replica types."""
    tolerations = [TOLERATION] if pool == "b" else []
    annotations = {RUN: finish_in} if finish_in else {}
    return {
        rtype: PodSetInfo(
            labels={"kueue.x-k8s.io/podset": rtype.lower()},
            annotations=annotations,
            node_selector={"pool": pool},
            tolerations=tolerations,
        )
        for rtype in ("PS", "Worker")
    }


def pods(cluster: Any, name: str) -> list[dict[str, Any]]:
    items, _ = cluster.registry.list(PODS, NS, label_selector=f"tf-job-name={name}")
    return list(items)


def services(cluster: Any, name: str) -> list[dict[str, Any]]:
    items, _ = cluster.registry.list(SERVICES, NS, label_selector=f"tf-job-name={name}")
    return list(items)


def conditions(cluster: Any, name: str) -> dict[str, str]:
    job = cluster.registry.get(TFJOBS, NS, name)
    return {c["type"]: c["status"] for c in (job.get("status") or {}).get("conditions") or []}


def running_on(cluster: Any, name: str, pool: str) -> list[dict[str, Any]] | None:
    """The job's three pods once all run on nodes of ``pool``."""
    found = pods(cluster, name)
    placed = [
        p
        for p in found
        if p["status"].get("phase") == "Running"
        and (p["spec"].get("nodeName") or "").startswith(f"{pool}-")
        and not p["metadata"].get("deletionTimestamp")
    ]
    return placed if len(found) == len(placed) == 3 else None


def evict_and_check(cluster: Any, kueue: Admitter, name: str) -> None:
    """Evict a running job: its pods and services go, nothing is active, it has not failed."""
    kueue.evict(name)
    wait_for(lambda: not pods(cluster, name), 30, what=f"{name}'s pods deleted")
    wait_for(lambda: not services(cluster, name), 30, what=f"{name}'s services deleted")
    wait_for(lambda: conditions(cluster, name).get("Suspended") == "True", 30, what="Suspended")
    assert not kueue.is_active(name)
    assert not kueue.pods_ready(name)
    assert kueue.finished(name) == (False, False)
    assert conditions(cluster, name).get("Failed") is None
    template = kueue.job(name)["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    assert "nodeSelector" not in template["spec"]  # restored


def test_admit_evict_admit_elsewhere_and_finish(cluster, operators):
    operators(cluster, "--no-leader-elect", "--threadiness=2")
    kueue, name = Admitter(cluster.registry), "queued"
    cluster.registry.create(TFJOBS, NS, queued_job(name))
    wait_for(lambda: conditions(cluster, name).get("Suspended") == "True", 30, what="Suspended")
    assert pods(cluster, name) == []

    kueue.admit(name, on_pool("a"))
    placed = wait_for(lambda: running_on(cluster, name, "a"), 30, what="pods running on pool a")
    assert all(p["spec"]["nodeSelector"] == {"pool": "a"} for p in placed)
    assert all(p["metadata"]["labels"]["kueue.x-k8s.io/podset"] in ("ps", "worker") for p in placed)
    wait_for(lambda: kueue.pods_ready(name) and kueue.is_active(name), 30, what="ready")

    evict_and_check(cluster, kueue, name)

    kueue.admit(name, on_pool("b", finish_in="0.3"))
    wait_for(lambda: kueue.finished(name) == (True, True), 30, what="Succeeded")
    worker = cluster.registry.get(PODS, NS, f"{name}-worker-0")
    assert worker["spec"]["nodeSelector"] == {"pool": "b"}
    assert TOLERATION in worker["spec"]["tolerations"]
    assert worker["spec"]["nodeName"].startswith("b-")
    assert conditions(cluster, name)["Suspended"] == "False"


def test_with_a_ttl_and_an_active_deadline(cluster, operators):
    """Suspending a job that carries a TTL works (upstream's #2239 broke Kueue's preemption
    there); the deadline does not run while the job is evicted and counts afresh from its
    next admission; once it finished, the TTL deletes it."""
    operators(cluster, "--no-leader-elect", "--threadiness=2")
    kueue, name, deadline = Admitter(cluster.registry), "limited", 2
    job = queued_job(name, ttlSecondsAfterFinished=1, activeDeadlineSeconds=deadline)
    cluster.registry.create(TFJOBS, NS, job)
    kueue.admit(name, on_pool("a"))
    wait_for(lambda: running_on(cluster, name, "a"), 30, what="pods running on pool a")
    evict_and_check(cluster, kueue, name)
    started = time.monotonic()
    # evicted for longer than the deadline: time itself is what this waits for
    wait_for(lambda: time.monotonic() - started > deadline + 1, deadline + 5, what="time")
    assert conditions(cluster, name).get("Failed") is None
    kueue.admit(name, on_pool("b", finish_in="0.3"))

    def gone() -> bool:
        items, _ = cluster.registry.list(TFJOBS, NS)
        return all(i["metadata"]["name"] != name for i in items)

    wait_for(gone, 30, what="the finished job deleted by its TTL")
    items, _ = cluster.registry.list(EVENTS, NS)
    reasons = {e["reason"] for e in items if e["involvedObject"].get("name") == name}
    assert "TFJobSucceeded" in reasons and "DeadlineExceeded" not in reasons
    assert {"TFJobSuspended", "TFJobResumed"} <= reasons


def test_with_volcano_gang_scheduling(operators):
    """The PodGroup goes with the eviction and comes back with the admission."""
    with LocalCluster(
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=POOLS,
        batch_schedulers=("volcano",),
        batch_schedule_period=0.2,
    ) as gang_cluster:
        install_crds(gang_cluster.registry)
        operators(
            gang_cluster,
            "--no-leader-elect",
            "--enable-gang-scheduling=true",
            "--gang-scheduler-name=volcano",
        )
        kueue, name, registry = Admitter(gang_cluster.registry), "gang", gang_cluster.registry

        def group() -> dict[str, Any] | None:
            items, _ = registry.list(VOLCANO_PODGROUPS, NS)
            return next((g for g in items if g["metadata"]["name"] == name), None)

        registry.create(TFJOBS, NS, queued_job(name))
        wait_for(
            lambda: conditions(gang_cluster, name).get("Suspended") == "True", 30, what="Suspended"
        )
        assert group() is None
        kueue.admit(name, on_pool("a"))
        assert wait_for(group, 30, what="the PodGroup")["spec"]["minMember"] == 3
        wait_for(lambda: running_on(gang_cluster, name, "a"), 30, what="the gang on pool a")
        evict_and_check(gang_cluster, kueue, name)
        wait_for(lambda: group() is None, 30, what="the PodGroup deleted on eviction")
        kueue.admit(name, on_pool("b", finish_in="0.3"))
        wait_for(group, 30, what="a new PodGroup")
        wait_for(lambda: kueue.finished(name) == (True, True), 30, what="Succeeded")
        wait_for(lambda: group() is None, 30, what="the PodGroup deleted at the end")
