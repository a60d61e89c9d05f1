"""Queue admission that works (issue 22, item 4): the local cluster's play of Kueue's kubeflow
job integration (``localcluster.kueue``) against the real operator on the simulated cluster.

A job that names a LocalQueue is created suspended (Kueue's webhook) and gets nothing; Kueue
makes its Workload; admitted on one pool of nodes it runs; evicted while running it loses its
pods and services, reports nothing active and does not fail, its templates as they were;
admitted again on another pool (a tainted one, the flavour bringing the toleration) its new
pods carry the new node selector and run there to Succeeded. The same with a TTL and an active
deadline set (neither fires across the eviction), with Volcano gang scheduling, and for a job
of four replica types, each admitted to its own pool (Kueue's pod set order)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from localcluster import kueue
from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.kueue import ClientJobs, Kueue, PodSetInfo, Workload
from localcluster.nodepool import NodePool
from localcluster.testing import BACKENDS, wait_for
from support.crd import install_crds

from .conftest import NS, PODS, SERVICES, TFJOBS

pytestmark = pytest.mark.integration

RUN = "localcluster.tf-operator.io/run-seconds"
TAINT = {"key": "dedicated", "value": "b", "effect": "NoSchedule"}
POOLS = [
    NodePool("a", labels={"pool": "a"}),
    NodePool("b", labels={"pool": "b"}, taints=[TAINT]),
]
# the flavours: pool a, and pool b whose nodes only admitted jobs tolerate
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "b", "effect": "NoSchedule"}
VOLCANO_PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")


@pytest.fixture(scope="module", params=BACKENDS)
def cluster(request) -> Iterator[Any]:
    with LocalCluster(
        control_plane=request.param,
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=POOLS,
    ) as c:
        install_crds(c.client)
        yield c


def replica(replicas: int) -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "localcluster/none"}
    return {"replicas": replicas, "template": {"spec": {"containers": [container]}}}


def queued_job(name: str, replicas: dict[str, int] | None = None, **run_policy: Any) -> dict:
    """A job sent to a LocalQueue, as Kueue's webhook lets it in; its pods run until deleted
    unless an admission says otherwise."""
    specs = {rtype: replica(n) for rtype, n in (replicas or {"PS": 1, "Worker": 2}).items()}
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "labels": {kueue.QUEUE_LABEL: "user-queue"}},
        "spec": {"runPolicy": run_policy, "tfReplicaSpecs": specs},
    }
    return kueue.default_on_create(job)


def flavour(pool: str, finish_in: str | None = None) -> PodSetInfo:
    """What admission to ``pool`` puts on a pod set (``finish_in``: the simulated kubelet ends
    its pods after that many seconds)."""
    return PodSetInfo(
        annotations={RUN: finish_in} if finish_in else {},
        node_selector={"pool": pool},
        tolerations=[TOLERATION] if pool == "b" else [],
    )


def on_pool(workload: Workload, pool: str, finish_in: str | None = None) -> list[PodSetInfo]:
    return [flavour(pool, finish_in) for _ in workload.pod_sets]


def pods(cluster: Any, name: str) -> list[dict[str, Any]]:
    """The job's pods, found as Kueue finds them."""
    selector = Kueue(ClientJobs(cluster.client)).pod_selector(name)
    items = cluster.client.list(PODS, NS, label_selector=selector).items
    return list(items)


def services(cluster: Any, name: str) -> list[dict[str, Any]]:
    items = cluster.client.list(SERVICES, NS, label_selector=f"tf-job-name={name}").items
    return list(items)


def job(cluster: Any, name: str) -> dict[str, Any]:
    return dict(cluster.client.get(TFJOBS, NS, name))


def conditions(cluster: Any, name: str) -> dict[str, str]:
    return {
        c["type"]: c["status"]
        for c in (job(cluster, name).get("status") or {}).get("conditions") or []
    }


def running_on(
    cluster: Any, name: str, pool: str, count: int = 3, phase: str | None = "Running"
) -> list[dict] | None:
    """The job's ``count`` pods once all are bound to nodes of ``pool`` (and in ``phase``)."""
    found = pods(cluster, name)
    placed = [
        p
        for p in found
        if phase in (None, p["status"].get("phase"))
        and (p["spec"].get("nodeName") or "").startswith(f"{pool}-")
        and not p["metadata"].get("deletionTimestamp")
    ]
    return placed if len(found) == len(placed) == count else None


def queue_up(cluster: Any, name: str) -> Workload:
    """Once the operator has the job suspended, Kueue makes its Workload."""
    wait_for(lambda: conditions(cluster, name).get("Suspended") == "True", 30, what="Suspended")
    assert pods(cluster, name) == [] and services(cluster, name) == []
    return Kueue(ClientJobs(cluster.client)).workload(NS, name)


def evict_and_check(cluster: Any, queue: Kueue, workload: Workload) -> None:
    """Evict a running job: its pods and services go, nothing is active, it has not failed,
    and its templates are the Workload's again."""
    name = workload.job_name
    queue.evict(workload)
    wait_for(lambda: not pods(cluster, name), 30, what=f"{name}'s pods deleted")
    wait_for(lambda: not services(cluster, name), 30, what=f"{name}'s services deleted")
    # Kueue releases the quota only once the job is inactive
    wait_for(lambda: not kueue.is_active(job(cluster, name)), 30, what="nothing active")
    current = job(cluster, name)
    assert all(s.get("active", 0) == 0 for s in current["status"]["replicaStatuses"].values())
    assert not kueue.pods_ready(current)
    assert kueue.finished(current) == (False, True, "")
    assert conditions(cluster, name)["Suspended"] == "True"
    assert "Failed" not in conditions(cluster, name)
    specs = current["spec"]["tfReplicaSpecs"]
    for pod_set in workload.pod_sets:
        assert PodSetInfo.of_template(specs[pod_set.replica_type]["template"]) == pod_set.template


def test_admit_evict_admit_elsewhere_and_finish(cluster, operators):
    operators(cluster, "--no-leader-elect", "--threadiness=2")
    queue, name = Kueue(ClientJobs(cluster.client)), "queued"
    created = cluster.client.create(TFJOBS, NS, queued_job(name))
    assert created["spec"]["runPolicy"]["suspend"] is True
    workload = queue_up(cluster, name)
    assert workload.pod_set_names == ["ps", "worker"]
    assert [p.count for p in workload.pod_sets] == [1, 2]

    queue.admit(workload, on_pool(workload, "a"))
    placed = wait_for(lambda: running_on(cluster, name, "a"), 30, what="pods running on pool a")
    assert all(p["spec"]["nodeSelector"] == {"pool": "a"} for p in placed)
    by_type = {p["metadata"]["labels"]["tf-replica-type"]: p for p in placed}
    assert by_type["ps"]["metadata"]["labels"][kueue.PODSET_LABEL] == "ps"
    assert by_type["worker"]["metadata"]["labels"][kueue.PODSET_LABEL] == "worker"
    wait_for(lambda: kueue.pods_ready(job(cluster, name)), 30, what="Running=True")
    assert kueue.is_active(job(cluster, name))

    evict_and_check(cluster, queue, workload)

    queue.admit(workload, on_pool(workload, "b", finish_in="2"))
    placed = wait_for(lambda: running_on(cluster, name, "b", phase=None), 30, what="on pool b")
    for pod in placed:
        assert pod["spec"]["nodeSelector"] == {"pool": "b"}
        assert TOLERATION in pod["spec"]["tolerations"]
    wait_for(lambda: kueue.finished(job(cluster, name)).finished, 30, what="finished")
    assert kueue.finished(job(cluster, name))[:2] == (True, True)
    assert conditions(cluster, name)["Suspended"] == "False"


def test_each_pod_set_gets_its_own_admission_in_kueues_order(cluster, operators):
    """Kueue gives pod set i of its Workload (Chief, Master, PS, Worker, Evaluator order, not
    the order the job lists them in) admission i: here each type goes to its own pool."""
    operators(cluster, "--no-leader-elect", "--threadiness=2")
    queue, name = Kueue(ClientJobs(cluster.client)), "ordered"
    written = {"Evaluator": 1, "Worker": 2, "PS": 1, "Chief": 1}
    cluster.client.create(TFJOBS, NS, queued_job(name, written))
    workload = queue_up(cluster, name)
    assert workload.pod_set_names == ["chief", "ps", "worker", "evaluator"]
    pools = {"chief": "a", "ps": "b", "worker": "a", "evaluator": "b"}
    infos = [flavour(pools[p], "1" if p == "chief" else None) for p in workload.pod_set_names]
    queue.admit(workload, infos)

    def placed() -> dict[str, str] | None:
        found = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods(cluster, name)}
        return found if len(found) == 5 and all(found.values()) else None

    nodes = wait_for(placed, 30, what="the five pods placed")
    for pod, node in nodes.items():
        assert node.startswith(pools[pod.split("-")[1]] + "-"), nodes
    wait_for(lambda: kueue.finished(job(cluster, name)).finished, 30, what="the chief's end")
    assert conditions(cluster, name)["Succeeded"] == "True"


def test_with_a_ttl_and_an_active_deadline(cluster, operators):
    """Suspending a job that carries a TTL works (upstream's #2239 broke Kueue's preemption
    there); the deadline does not run while the job is evicted and counts afresh from its
    next admission; once it finished, the TTL deletes it."""
    operators(cluster, "--no-leader-elect", "--threadiness=2")
    # the deadline must cover the pods' start and end after the re-admission, under load too
    queue, name, deadline = Kueue(ClientJobs(cluster.client)), "limited", 5
    job_ = queued_job(name, ttlSecondsAfterFinished=1, activeDeadlineSeconds=deadline)
    cluster.client.create(TFJOBS, NS, job_)
    workload = queue_up(cluster, name)
    queue.admit(workload, on_pool(workload, "a"))
    wait_for(lambda: running_on(cluster, name, "a"), 30, what="pods running on pool a")
    evict_and_check(cluster, queue, workload)
    started = time.monotonic()
    # evicted for longer than the deadline: time itself is what this waits for
    wait_for(lambda: time.monotonic() - started > deadline + 1, deadline + 5, what="time")
    assert "Failed" not in conditions(cluster, name)
    # the job's last state comes with its deletion: the TTL only deletes a finished job
    watch = cluster.client.watch(TFJOBS, NS, field_selector=f"metadata.name={name}")
    try:
        queue.admit(workload, on_pool(workload, "b", finish_in="0.3"))
        deadline = time.monotonic() + 30
        while (event := watch.get_shared(max(0.0, deadline - time.monotonic()))) is not None:
            if event[0] == "DELETED":
                break
        assert event is not None and event[0] == "DELETED", "the job was not deleted by its TTL"
    finally:
        watch.stop()
    last = {c["type"]: c for c in event[1]["status"]["conditions"]}
    assert "Failed" not in last, last["Failed"]
    assert last["Succeeded"]["status"] == "True"
    assert last["Suspended"]["reason"] == "TFJobResumed"


@pytest.mark.parametrize("control_plane", BACKENDS)
def test_with_volcano_gang_scheduling(operators, control_plane):
    """The PodGroup goes with the eviction and comes back with the admission; the gang's pods
    carry each admission's node selector."""
    with LocalCluster(
        control_plane=control_plane,
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=POOLS,
        batch_schedulers=("volcano",),
        batch_schedule_period=0.2,
    ) as gang_cluster:
        install_crds(gang_cluster.client)
        operators(
            gang_cluster,
            "--no-leader-elect",
            "--enable-gang-scheduling=true",
            "--gang-scheduler-name=volcano",
        )
        client, name = gang_cluster.client, "gang"
        queue = Kueue(ClientJobs(gang_cluster.client))

        def group() -> dict[str, Any] | None:
            items = client.list(VOLCANO_PODGROUPS, NS).items
            return next((g for g in items if g["metadata"]["name"] == name), None)

        client.create(TFJOBS, NS, queued_job(name))
        workload = queue_up(gang_cluster, name)
        assert group() is None
        queue.admit(workload, on_pool(workload, "a"))
        assert wait_for(group, 30, what="the PodGroup")["spec"]["minMember"] == 3
        wait_for(lambda: running_on(gang_cluster, name, "a"), 30, what="the gang on pool a")
        evict_and_check(gang_cluster, queue, workload)
        wait_for(lambda: group() is None, 30, what="the PodGroup deleted on eviction")
        queue.admit(workload, on_pool(workload, "b", finish_in="2"))
        wait_for(group, 30, what="a new PodGroup")
        placed = wait_for(
            lambda: running_on(gang_cluster, name, "b", phase=None), 30, what="gang on pool b"
        )
        assert all(p["spec"]["schedulerName"] == "volcano" for p in placed)
        assert all(p["spec"]["nodeSelector"] == {"pool": "b"} for p in placed)
        wait_for(lambda: kueue.finished(job(gang_cluster, name)).finished, 30, what="finished")
        assert conditions(gang_cluster, name)["Succeeded"] == "True"
        wait_for(lambda: group() is None, 30, what="the PodGroup deleted at the end")
