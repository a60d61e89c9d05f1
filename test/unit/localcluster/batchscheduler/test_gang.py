"""Volcano's ``minTaskMember``: a minimum per ``volcano.sh/task-spec`` name beside minMember.

The facts, from Volcano v1.8's ``JobInfo.CheckTaskValid``/``CheckTaskReady``/
``CheckTaskPipelined`` and the gang plugin: a job whose tasks of one name are fewer than that
name's minimum is invalid (nothing is tried); one whose placed tasks of a name stay below its
minimum is not ready, so its allocations are discarded even when minMember pods were placed;
the per-task checks are skipped when minMember is below the minimums' sum.

The job is a TFJob's shape: a PS without requests, which counts as placed from the start, and
two one-CPU workers on a node with room for one: minMember 2 is met by the PS and one worker,
``minTaskMember: {worker: 2}`` is not.
"""

from __future__ import annotations

import pytest

from localcluster.nodepool import NodePool

TASK_SPEC = "volcano.sh/task-spec"


def _pod(g, name: str, task: str, cpu: str | None = "1") -> None:
    memory = "256Mi" if cpu else None
    g.pod(name, "tf", cpu=cpu, memory=memory, annotations={TASK_SPEC: task})


def _job(g) -> None:
    """A PS without requests (it counts as placed) and two one-CPU workers."""
    _pod(g, "tf-ps-0", "ps", cpu=None)
    _pod(g, "tf-worker-0", "worker")
    _pod(g, "tf-worker-1", "worker")


NAMES = ("tf-ps-0", "tf-worker-0", "tf-worker-1")


@pytest.fixture
def one_cpu(gang):
    # room for one worker only
    return gang("volcano", [NodePool(name="n", cpu="1", memory="8Gi")])


def test_without_minimums_the_ps_and_one_worker_make_the_gang(one_cpu):
    g = one_cpu
    g.podgroup("tf", 2)
    _job(g)
    g.run(1)
    assert g.bound(*NAMES) == {"tf-ps-0": "n-0", "tf-worker-0": "n-0", "tf-worker-1": None}


def test_a_task_below_its_minimum_keeps_the_whole_gang_waiting(one_cpu):
    g = one_cpu
    g.podgroup("tf", 2, minTaskMember={"worker": 2})
    _job(g)
    g.run(2)
    assert g.bound(*NAMES) == {"tf-ps-0": None, "tf-worker-0": None, "tf-worker-1": None}
    assert g.phase("tf") == "Inqueue"
    # room for the second worker: the whole gang is placed at once
    g.add_node("m-0", cpu="1", memory="8Gi")
    g.run(1)
    placed = g.bound(*NAMES)
    assert all(placed.values()) and {placed["tf-worker-0"], placed["tf-worker-1"]} == {"n-0", "m-0"}
    assert g.phase("tf") == "Running"


def test_too_few_pods_of_a_task_make_the_job_invalid(gang):
    g = gang("volcano", [NodePool(name="n", cpu="4", memory="8Gi")])
    g.podgroup("tf", 2, minTaskMember={"worker": 2})
    _pod(g, "tf-ps-0", "ps")
    _pod(g, "tf-worker-0", "worker")
    summary = g.run(1)
    # minMember 2 is met, but one worker of the two the group asks for exists
    assert g.bound("tf-ps-0", "tf-worker-0") == {"tf-ps-0": None, "tf-worker-0": None}
    assert summary.ready["default/tf"] is False
    _pod(g, "tf-worker-1", "worker")
    g.run(1)
    assert g.bound(*NAMES) == {"tf-ps-0": "n-0", "tf-worker-0": "n-0", "tf-worker-1": "n-0"}


def test_minimums_above_min_member_are_ignored(one_cpu):
    g = one_cpu
    # 1 + 2 > minMember 2: Volcano skips the per-task checks
    g.podgroup("tf", 2, minTaskMember={"ps": 1, "worker": 2})
    _job(g)
    g.run(1)
    assert g.bound(*NAMES) == {"tf-ps-0": "n-0", "tf-worker-0": "n-0", "tf-worker-1": None}


def test_kube_batch_has_no_task_minimums(gang):
    g = gang("kube-batch", [NodePool(name="n", cpu="1", memory="8Gi")])
    # kube-batch's PodGroup has no such field: one stray in the object changes nothing
    g.podgroup("tf", 2, minTaskMember={"worker": 2})
    _job(g)
    g.run(1)
    assert g.bound(*NAMES) == {"tf-ps-0": "n-0", "tf-worker-0": "n-0", "tf-worker-1": None}
