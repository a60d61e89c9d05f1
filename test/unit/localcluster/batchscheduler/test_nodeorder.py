"""nodeorder scores with non-zero requests (a container without requests weighs 100m cpu and
200Mi memory, as in Kubernetes' scoring) while fit keeps the real requests."""

from __future__ import annotations

import pytest

from localcluster.batchscheduler.api import NodeInfo, TaskInfo, TaskStatus
from localcluster.batchscheduler.cache import task_requests
from localcluster.batchscheduler.plugins.nodeorder import balanced_resource, least_requested
from localcluster.nodepool import NodePool

MI = 2**20
GI = 2**30
# one container without requests, in milli-units
DEFAULT_NONZERO = {"cpu": 100, "memory": 200 * MI * 1000}


def node_info(cpu: int = 4000, memory: int = 8 * GI * 1000) -> NodeInfo:
    return NodeInfo(
        name="n",
        node={},
        allocatable={"cpu": cpu, "memory": memory},
        used={},
        releasing={},
        max_pods=110,
        pod_count=0,
    )


def task(name: str, status: TaskStatus = TaskStatus.ALLOCATED) -> TaskInfo:
    """A pod without requests, as the cache builds it."""
    pod = {"spec": {"containers": [{"name": "c"}]}}
    resreq, init, nonzero = task_requests(pod)
    return TaskInfo(
        key=f"default/{name}",
        name=name,
        namespace="default",
        job="default/j",
        pod=pod,
        resreq=resreq,
        init_resreq=init,
        nonzero=nonzero,
        status=status,
        node=None,
        priority=1,
        created="",
        task_spec="",
    )


def test_a_pod_without_requests_is_scored_with_the_defaults():
    t = task("t")
    assert (t.resreq, t.init_resreq, t.nonzero) == ({}, {}, DEFAULT_NONZERO)


def test_the_node_counts_non_zero_requests_as_tasks_come_and_go():
    node, a, b = node_info(), task("a"), task("b", TaskStatus.RELEASING)
    node.add_task(a)
    node.add_task(b)
    assert node.nonzero == {"cpu": 200, "memory": 400 * MI * 1000}
    assert node.used == {}  # fit still sees nothing requested
    node.remove_task(a)
    assert node.nonzero == DEFAULT_NONZERO
    node.remove_task(b)
    assert node.nonzero == {"cpu": 0, "memory": 0}


def test_tasks_without_requests_make_a_node_score_lower():
    empty, busy, t = node_info(), node_info(), task("t")
    for i in range(10):
        busy.add_task(task(f"p-{i}"))
    # 11 x 100m of 4 cpu and 11 x 200Mi of 8Gi: 72% and 73% free (no tasks: 97% and 97%)
    assert least_requested(t, empty) == 97 > least_requested(t, busy) == 72
    assert balanced_resource(t, busy) == 99


@pytest.mark.parametrize("flavour", ["kube-batch", "volcano"])
def test_pods_without_requests_spread_over_the_nodes(gang, flavour):
    g = gang(flavour, [NodePool("n", count=2, cpu="4", memory="8Gi")])
    g.podgroup("a", 1)
    g.pod("a-0", "a", memory=None)
    g.run(1)
    assert g.node_of("a-0") == "n-0"
    # the next cycle sees a-0 through the ledger's non-zero requests
    g.podgroup("b", 5)
    for i in range(5):
        g.pod(f"b-{i}", "b", memory=None)
    g.run(1)
    nodes = list(g.bound(*(f"b-{i}" for i in range(5))).values())
    assert sorted(nodes) == ["n-0"] * 2 + ["n-1"] * 3


@pytest.mark.parametrize("flavour", ["kube-batch", "volcano"])
def test_a_pod_without_requests_fits_a_node_whose_cpu_is_all_requested(gang, flavour):
    g = gang(flavour, [NodePool("n", cpu="1", memory="1Gi")])
    g.podgroup("full", 1)
    g.pod("full-0", "full", cpu="1", memory="1Gi")
    g.run(1)
    assert g.node_of("full-0") == "n-0"
    g.podgroup("free", 2)
    g.pod("free-0", "free", memory=None)
    g.pod("free-1", "free", memory=None)
    g.run(1)
    assert g.bound("free-0", "free-1") == {"free-0": "n-0", "free-1": "n-0"}
