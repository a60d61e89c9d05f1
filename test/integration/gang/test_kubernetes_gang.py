"""Kubernetes' own gang scheduling end to end (``--gang-scheduler-name kubernetes``, D180):
the real ``tf-operator`` binary makes each job's Workload and PodGroup, the cluster's default
scheduler places a group all or nothing.

Written against the public API only (``public_cluster``): every test runs on the emulator and
on the real control plane (kube-apiserver, kube-controller-manager and kube-scheduler v1.37 with
``localcluster.features``), where the real kube-scheduler does the gang scheduling."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localcluster import kueue
from localcluster.kueue import Kueue, PodSetInfo
from localcluster.nodepool import NodePool
from localcluster.testing import wait_for
from support.operator_process import OperatorProcess
from tf_operator.k8s.client import PRIORITY_CLASSES
from tf_operator.sdk import TFJobClient
from tf_operator.sdk.lifecycle import blocking_reason

from .public_cluster import (
    CONTROL_PLANES,
    EVENTS,
    INITIALLY_SCHEDULED,
    NS,
    POD_GROUPS,
    PODS,
    TFJOBS,
    WORKLOADS,
    PublicCluster,
    cluster_with_nodes,
    condition,
    tfjob,
)

pytestmark = pytest.mark.integration

# two nodes of 2 CPUs: a job of two 2-CPU workers fills them
TWO_NODES = [NodePool("n", count=2, cpu="2", memory="8Gi")]
ROUNDS = 3  # the competition is run this many times in a row, from scratch each time


@pytest.fixture(params=CONTROL_PLANES)
def cluster(request, tmp_path) -> Iterator[PublicCluster]:
    with cluster_with_nodes(TWO_NODES, request.param) as public:
        operator = OperatorProcess(
            public.kubeconfig,
            tmp_path / "operator.log",
            [
                "--no-leader-elect",
                "--enable-gang-scheduling=true",
                "--gang-scheduler-name=kubernetes",
            ],
        )
        try:
            yield public
        finally:
            operator.stop()


def bound(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in pods if p["spec"].get("nodeName")]


def all_bound(cluster: PublicCluster, job: str, count: int) -> list[dict[str, Any]] | None:
    pods = cluster.job_pods(job)
    return pods if len(pods) == count and len(bound(pods)) == count else None


def nothing_left(cluster: PublicCluster, *jobs: str) -> bool:
    return not any(
        cluster.job_pods(j) or cluster.job_groups(j) or cluster.job_workloads(j) for j in jobs
    )


class PlacementWatch:
    """Every pod event of the namespace, checked as it comes: no two jobs ever hold bound pods
    at once (the nodes fit one), and a job's pods are bound only as a whole gang."""

    def __init__(self, cluster: PublicCluster, jobs: tuple[str, ...]) -> None:
        self._jobs = jobs
        self._bound: dict[str, set[str]] = {j: set() for j in jobs}
        self.violations: list[str] = []
        self._stop = threading.Event()
        self._watch = cluster.client.resource(PODS).watch(NS, timeout_seconds=120)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for event_type, pod in self._watch:
            if self._stop.is_set():
                return
            job = (pod["metadata"].get("labels") or {}).get("tf-job-name")
            if job not in self._bound:
                continue
            name = pod["metadata"]["name"]
            if (
                event_type != "DELETED"
                and pod["spec"].get("nodeName")
                and pod["status"].get("phase") not in ("Succeeded", "Failed")
            ):
                self._bound[job].add(name)
            else:
                self._bound[job].discard(name)
            holders = [j for j, names in self._bound.items() if names]
            if len(holders) > 1:
                self.violations.append(f"{holders} hold nodes at once: {self._bound}")

    def stop(self) -> None:
        self._stop.set()
        self._watch.close()
        self._thread.join(5)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_two_jobs_competing_for_nodes_that_fit_one_never_place_partially(cluster, round_):
    """One job runs whole, the other waits with no pod bound, then runs whole when the first
    finishes; the group of the waiting one says why, and so does its job."""
    watch = PlacementWatch(cluster, ("first", "second"))
    try:
        jobs = cluster.client.resource(TFJOBS)
        jobs.create(tfjob("first", 2, "2", run_seconds=3), NS)
        jobs.create(tfjob("second", 2, "2", run_seconds=1), NS)
        winner = wait_for(
            lambda: next((j for j in ("first", "second") if all_bound(cluster, j, 2)), None),
            30,
            what="one job placed whole",
        )
        loser = "second" if winner == "first" else "first"
        assert bound(cluster.job_pods(loser)) == []
        (group,) = wait_for(lambda: cluster.job_groups(loser) or None, 10, what="group")
        waiting = wait_for(
            lambda: condition(
                cluster.get(POD_GROUPS, group["metadata"]["name"]), INITIALLY_SCHEDULED
            ),
            30,
            what="the waiting group's condition",
        )
        assert (waiting["status"], waiting["reason"]) == ("False", "Unschedulable")
        assert "minCount (2) cannot be satisfied" in waiting["message"]
        wait_for(lambda: all_bound(cluster, loser, 2), 60, what=f"{loser} placed after {winner}")
        wait_for(
            lambda: condition(cluster.get(TFJOBS, loser), "Succeeded"), 60, what="loser Succeeded"
        )
        assert watch.violations == []
        for name in ("first", "second"):
            jobs.delete(name, NS, propagation_policy="Background")
        wait_for(lambda: nothing_left(cluster, "first", "second"), 120, what="all cleaned up")
    finally:
        watch.stop()
    assert watch.violations == []


def test_min_available_below_the_replicas_schedules_that_many(cluster):
    """Three 1.5-CPU workers on two 2-CPU nodes, minAvailable 2: the gang of two is placed,
    the third waits alone."""
    cluster.client.resource(TFJOBS).create(tfjob("partial", 3, "1500m", min_available=2), NS)
    wait_for(lambda: len(bound(cluster.job_pods("partial"))) == 2, 30, what="two placed")
    (group,) = cluster.job_groups("partial")
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    name = group["metadata"]["name"]
    cond = wait_for(
        lambda: condition(cluster.get(POD_GROUPS, name), INITIALLY_SCHEDULED), 30, what="condition"
    )
    if cond["status"] != "True":
        # kube-scheduler 1.37: the cycle of the pod left over beyond minCount can overwrite the
        # True condition from a stale cache ("pod group is unschedulable, ..."); the gang
        # itself is placed, which is what this test is about
        assert cond["reason"] == "Unschedulable", cond
        assert cond["message"].startswith("pod group is unschedulable"), cond
    pods = cluster.job_pods("partial")
    assert len(pods) == 3 and len(bound(pods)) == 2
    for pod in pods:
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": group["metadata"]["name"]}
        assert pod["spec"].get("schedulerName") in (None, "default-scheduler")
    with TFJobClient(cluster.kubeconfig, namespace=NS) as sdk:
        info = sdk.get_pod_group("partial")
    expected = "Scheduled" if cond["status"] == "True" else "Unschedulable"
    assert info is not None and (info.min_member, info.state) == (2, expected)


def test_an_unplaceable_group_tells_its_reason_on_the_job(cluster):
    """Two 3-CPU workers never fit 2-CPU nodes: no pod is bound, the PodGroup says why and the
    TFJob gets one Warning event with the scheduler's message."""
    cluster.client.resource(TFJOBS).create(tfjob("too-big", 2, "3"), NS)
    (group,) = wait_for(lambda: cluster.job_groups("too-big") or None, 30, what="group")
    name = group["metadata"]["name"]
    cond = wait_for(
        lambda: condition(cluster.get(POD_GROUPS, name), INITIALLY_SCHEDULED), 30, what="reason"
    )
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")

    def told() -> list[dict[str, Any]]:
        return [
            e
            for e in cluster.items(EVENTS)
            if e["involvedObject"].get("name") == "too-big"
            and e["involvedObject"].get("kind") == "TFJob"
            and e["reason"] == "PodGroupUnschedulable"
            and cond["message"] in e["message"]
        ]

    (event,) = wait_for(told, 30, what="the reason on the TFJob")
    assert event["type"] == "Warning" and name in event["message"]
    assert bound(cluster.job_pods("too-big")) == []
    # users see the group and why it waits: the SDK and `tfjob describe`
    with TFJobClient(cluster.kubeconfig, namespace=NS) as sdk:
        info = sdk.get_pod_group("too-big")
    assert info is not None
    assert (info.name, info.min_member, info.state) == (name, 2, "Unschedulable")
    assert info.message == cond["message"]
    tfjob_cli = Path(sys.executable).parent / "tfjob"
    out = subprocess.run(
        [str(tfjob_cli), "--kubeconfig", cluster.kubeconfig, "-n", NS, "describe", "too-big"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("PodGroup:"))
    assert name in line and "Unschedulable" in line and cond["message"] in line


def _blocked(cluster: PublicCluster, name: str) -> str:
    job = cluster.get(TFJOBS, name) or {}
    created = condition(job, "Created") or {}
    message = str(created.get("message") or "")
    return message.split(" Blocked: ", 1)[1] if " Blocked: " in message else ""


def _warnings(cluster: PublicCluster, name: str, reason: str) -> list[dict[str, Any]]:
    return [
        e
        for e in cluster.items(EVENTS)
        if e["involvedObject"].get("name") == name
        and e["involvedObject"].get("kind") == "TFJob"
        and e["reason"] == reason
    ]


def _describe(cluster: PublicCluster, name: str) -> list[str]:
    tfjob_cli = Path(sys.executable).parent / "tfjob"
    return subprocess.run(
        [str(tfjob_cli), "--kubeconfig", cluster.kubeconfig, "-n", NS, "describe", name],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()


def test_min_count_above_the_replicas_is_told_until_it_is_lowered(cluster):
    """kube-scheduler waits silently for pods that will never come; the job says why in its
    Created condition, once as a Warning event and in ``tfjob describe`` (D156), and runs once
    minAvailable is lowered."""
    body = tfjob("gang-of-3", 2, "500m", min_available=3, run_seconds=0.5)
    cluster.client.resource(TFJOBS).create(body, NS)
    why = (
        "runPolicy.schedulingPolicy.minAvailable 3 is above the job's 2 replicas: its gang can "
        "never be placed; the job waits until minAvailable is lowered or replicas are added"
    )
    wait_for(lambda: _blocked(cluster, "gang-of-3") == why, 30, what="the reason")
    (told,) = wait_for(lambda: _warnings(cluster, "gang-of-3", "GangUnsatisfiable"), 30)
    assert told["type"] == "Warning" and told["message"] == why
    assert bound(cluster.job_pods("gang-of-3")) == []
    assert [x for x in _describe(cluster, "gang-of-3") if x.startswith("Blocked:")] == [
        f"Blocked:          {why}"
    ]
    with TFJobClient(cluster.kubeconfig, namespace=NS) as sdk:
        assert blocking_reason(sdk.get("gang-of-3")) == why
    patch = {"spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": 2}}}}
    cluster.client.resource(TFJOBS).patch("gang-of-3", patch, NS)
    wait_for(lambda: condition(cluster.get(TFJOBS, "gang-of-3"), "Succeeded"), 60, what="Succeeded")
    assert _blocked(cluster, "gang-of-3") == ""
    assert [e.get("count", 1) for e in _warnings(cluster, "gang-of-3", "GangUnsatisfiable")] == [1]


def test_a_group_refused_for_a_missing_priority_class_is_told(cluster):
    """kube-apiserver's Priority admission refuses a PodGroup naming a PriorityClass that does
    not exist (the group carries the templates' class); no pod is made, the job says why
    (D157), and runs once the class is made."""
    pc = "nosuch-gang"
    body = tfjob("unranked", 2, "500m", run_seconds=0.5)
    body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["priorityClassName"] = pc
    cluster.client.resource(TFJOBS).create(body, NS)
    wait_for(lambda: _blocked(cluster, "unranked"), 30, what="the reason")
    why = _blocked(cluster, "unranked")
    assert why.startswith("its PodGroup cannot be created: podgroups.scheduling.k8s.io ")
    assert why.endswith(f"is forbidden: no PriorityClass with name {pc} was found")
    (told,) = wait_for(lambda: _warnings(cluster, "unranked", "PodGroupRefused"), 30)
    assert told["type"] == "Warning" and told["message"] == why
    assert cluster.job_pods("unranked") == []
    priority_class = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": pc},
        "value": 10,
    }
    cluster.client.resource(PRIORITY_CLASSES).create(priority_class, None)
    try:
        wait_for(
            lambda: condition(cluster.get(TFJOBS, "unranked"), "Succeeded"), 60, what="Succeeded"
        )
        assert _blocked(cluster, "unranked") == ""
        assert [e.get("count", 1) for e in _warnings(cluster, "unranked", "PodGroupRefused")] == [1]
    finally:
        cluster.client.resource(PRIORITY_CLASSES).delete(pc, None)


def _suspended(cluster: PublicCluster, name: str) -> bool:
    """The operator wrote Suspended, which it does once the pods' deletions are issued."""
    found = condition(cluster.get(TFJOBS, name), "Suspended")
    return found is not None and found.get("status") == "True"


def _suspend(cluster: PublicCluster, name: str, suspend: bool) -> None:
    patch = {"spec": {"runPolicy": {"suspend": suspend}}}
    cluster.client.resource(TFJOBS).patch(name, patch, NS)


def test_suspend_removes_pods_and_groups_and_resume_makes_them_again(cluster):
    cluster.client.resource(TFJOBS).create(tfjob("pausing", 2, "1"), NS)
    wait_for(lambda: all_bound(cluster, "pausing", 2), 30, what="placed")
    (before,) = cluster.job_groups("pausing")
    _suspend(cluster, "pausing", True)
    wait_for(lambda: nothing_left(cluster, "pausing"), 30, what="nothing left while suspended")
    _suspend(cluster, "pausing", False)
    pods = wait_for(lambda: all_bound(cluster, "pausing", 2), 30, what="placed again")
    (after,) = cluster.job_groups("pausing")
    assert after["metadata"]["uid"] != before["metadata"]["uid"]  # made again
    for pod in pods:  # no pod points at a missing group
        assert pod["spec"]["schedulingGroup"]["podGroupName"] == after["metadata"]["name"]
    (workload,) = cluster.job_workloads("pausing")
    assert after["spec"]["workloadRef"]["workloadName"] == workload["metadata"]["name"]


class PublicJobs:
    """Kueue's reads and writes of a TFJob (``localcluster.kueue.Jobs``) through the API."""

    def __init__(self, cluster: PublicCluster) -> None:
        self._jobs = cluster.client.resource(TFJOBS)

    def get(self, namespace: str, name: str) -> dict[str, Any]:
        return self._jobs.get(name, namespace)

    def merge_patch(self, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        return self._jobs.patch(name, patch, namespace)


def test_kueue_eviction_removes_pods_and_groups_and_readmission_runs_the_gang(cluster):
    queue = Kueue(PublicJobs(cluster))
    job = kueue.default_on_create(tfjob("queued", 2, "1", labels={kueue.QUEUE_LABEL: "q"}))
    cluster.client.resource(TFJOBS).create(job, NS)
    wait_for(
        lambda: (
            (condition(cluster.get(TFJOBS, "queued"), "Suspended") or {}).get("status") == "True"
        ),
        30,
        what="queued job suspended",
    )
    assert nothing_left(cluster, "queued")  # no group for a job Kueue has not admitted
    workload = queue.workload(NS, "queued")
    queue.admit(workload, [PodSetInfo() for _ in workload.pod_sets])
    wait_for(lambda: all_bound(cluster, "queued", 2), 30, what="admitted and placed")
    assert len(cluster.job_groups("queued")) == 1
    queue.evict(workload)
    wait_for(lambda: nothing_left(cluster, "queued"), 30, what="evicted: nothing left")
    queue.admit(workload, [PodSetInfo() for _ in workload.pod_sets])
    wait_for(lambda: all_bound(cluster, "queued", 2), 30, what="admitted again and placed")


def test_deleting_the_job_leaves_no_group_workload_or_pod(cluster):
    cluster.client.resource(TFJOBS).create(tfjob("doomed", 2, "1"), NS)
    wait_for(lambda: all_bound(cluster, "doomed", 2), 30, what="placed")
    assert cluster.job_workloads("doomed") and cluster.job_groups("doomed")
    cluster.client.resource(TFJOBS).delete("doomed", NS, propagation_policy="Background")
    wait_for(lambda: nothing_left(cluster, "doomed"), 120, what="collected")
    assert cluster.get(WORKLOADS, "doomed") is None


def test_a_deleted_group_stays_while_its_pods_do_and_is_made_again_before_new_pods(cluster):
    """Pods never point at a missing group: a PodGroup deleted under its pods is kept
    (finalizer scheduling.k8s.io/podgroup-protection) until they are gone; a job suspended and
    resumed at once gets its pods again only once a new group is there."""
    cluster.client.resource(TFJOBS).create(tfjob("regrouped", 2, "1"), NS)
    wait_for(lambda: all_bound(cluster, "regrouped", 2), 30, what="placed")
    (group,) = cluster.job_groups("regrouped")
    name, uid = group["metadata"]["name"], group["metadata"]["uid"]
    assert "scheduling.k8s.io/podgroup-protection" in group["metadata"]["finalizers"]
    cluster.client.resource(POD_GROUPS).delete(name, NS)
    kept = cluster.get(POD_GROUPS, name)
    assert kept is not None and kept["metadata"].get("deletionTimestamp")
    _suspend(cluster, "regrouped", True)
    # resumed once the operator has acted on the suspension (a suspend undone before any pass
    # saw it is nothing to act on), at once: the old group may still be going
    wait_for(lambda: _suspended(cluster, "regrouped"), 30, what="the suspension acted on")
    _suspend(cluster, "regrouped", False)

    def again() -> list[dict[str, Any]] | None:
        current = cluster.get(POD_GROUPS, name)
        if not current or current["metadata"]["uid"] == uid:
            return None
        return all_bound(cluster, "regrouped", 2)

    pods = wait_for(again, 90, what="a new group, then the pods placed again")
    for pod in pods:
        assert pod["spec"]["schedulingGroup"]["podGroupName"] == name
    current = cluster.get(POD_GROUPS, name)
    assert current is not None and not current["metadata"].get("deletionTimestamp")
