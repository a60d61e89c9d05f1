"""The PodGroup controller's phases and counts: the facts of scheduler-plugins v0.28.9
``podgroup_controller_test.go`` (``Test_Run``, ``TestFillGroupStatusOccupied``), run through
the same reconcile steps, and the controller syncing a live cluster's group."""

from __future__ import annotations

import time

import pytest

from localcluster.apimachinery.objects import format_time
from localcluster.coscheduling.controller import gave_up, next_status
from localcluster.coscheduling.podgroup import POD_GROUP_LABEL

NOW = time.time()


def podgroup(name: str, min_member: int, phase: str, created: float = NOW) -> dict:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": "default",
            "creationTimestamp": format_time(created),
        },
        "spec": {"minMember": min_member},
        "status": {"occupiedBy": "test", "scheduleStartTime": format_time(NOW), "phase": phase},
    }


def pods(names: list[str], group: str, phase: str, owners: list[str] = ()) -> list[dict]:
    meta = {"namespace": "default", "labels": {POD_GROUP_LABEL: group}}
    if owners:
        meta["ownerReferences"] = [{"name": owner} for owner in owners]
    return [{"metadata": {**meta, "name": n}, "status": {"phase": phase}} for n in names]


def reconcile(group: dict, seen: list[dict]) -> dict:
    """One pass of the controller (the 48-hour rule first, as ``sync`` does)."""
    if group["status"].get("phase") in ("Finished", "Failed") or gave_up(group):
        return group
    return {**group, "status": next_status(group, seen)}


CASES = [
    # name, minMember, pods, pod phase, next pod phase, previous group phase, wanted, created
    ("Group running", 2, ["pod1", "pod2"], "Running", None, "Scheduling", "Running", NOW),
    ("Group running, more than min member", 2, ["pod11", "pod21", "pod31", "pod41"], "Running", None, "Scheduling", "Running", NOW),
    ("Group failed", 2, ["pod1", "pod2"], "Failed", None, "Scheduling", "Failed", NOW),
    ("Group finished", 2, ["pod1", "pod2"], "Succeeded", None, "Scheduling", "Finished", NOW),
    ("Group status convert from pending to prescheduling", 2, ["pod1", "pod2"], "Pending", None, "Pending", "Scheduling", NOW),
    ("Group status convert from scheduling to finished", 2, ["pod1", "pod2"], "Pending", "Succeeded", "Scheduling", "Finished", NOW),
    ("Group status keeps pending", 3, ["pod1", "pod2"], "Running", None, "Pending", "Pending", NOW),
    ("Group status convert from pending to finished", 2, ["pod1", "pod2"], "Pending", "Succeeded", "Pending", "Finished", NOW),
    ("Group should not enqueue, created too long", 2, ["pod1", "pod2"], "Running", None, "Pending", "Pending", NOW - 72 * 3600),
    ("Group min member more than Pod number", 3, ["pod91", "pod92"], "Pending", None, "Pending", "Pending", NOW),
    ("Group status convert from running to pending", 4, ["pod101", "pod102"], "Pending", None, "Running", "Pending", NOW),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "min_member", "names", "phase", "next_phase", "previous", "wanted", "created"),
    CASES,
    ids=[case[0] for case in CASES],  # the times in CASES differ between pytest-xdist workers
)
def test_run(case, min_member, names, phase, next_phase, previous, wanted, created):
    group = podgroup("pg", min_member, previous, created)
    # upstream's fixture creates the first two pods; each pod update triggers one reconcile
    seen = pods(names[:2], "pg", next_phase or phase)
    for _ in names:
        group = reconcile(group, seen)
    assert group["status"]["phase"] == wanted, case


@pytest.mark.parametrize(
    ("owners", "wanted"),
    [
        (["new-occupied"], "default/new-occupied"),
        (["new-occupied-1", "new-occupied-2"], "default/new-occupied-1,default/new-occupied-2"),
    ],
)
def test_fill_group_status_occupied(owners, wanted):
    group = podgroup("pg", 2, "Pending")
    status = next_status(group, pods(["pod1", "pod2"], "pg", "Pending", owners))
    assert (status["phase"], status["occupiedBy"]) == ("Scheduling", wanted)


def test_counts_are_written_and_dropped_at_zero():
    group = podgroup("pg", 2, "Scheduling")
    status = next_status(group, pods(["a"], "pg", "Running") + pods(["b"], "pg", "Succeeded"))
    assert (status["running"], status["succeeded"], "failed" in status) == (1, 1, False)
    group["status"] = status
    status = next_status(group, pods(["a", "b"], "pg", "Succeeded"))
    assert (status["phase"], status["succeeded"], "running" in status) == ("Finished", 2, False)


def test_a_group_without_a_phase_starts_pending():
    assert next_status({"spec": {"minMember": 1}}, [])["phase"] == "Pending"
