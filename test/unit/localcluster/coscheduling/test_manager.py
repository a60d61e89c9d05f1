"""The PodGroup manager: the facts of scheduler-plugins v0.28.9 ``core_test.go``
(``TestPreFilter``, ``TestPermit``, ``TestCheckClusterResource``), on a fake view of the
cluster, and the node ledger's free room that the minResources check reads."""

from __future__ import annotations

from fractions import Fraction

import pytest

from localcluster.coscheduling.manager import (
    PodGroupManager,
    Verdict,
    check_cluster_resource,
    format_amount,
    resource_gap_message,
)
from localcluster.coscheduling.podgroup import PodGroupSpec
from localcluster.kubelet.node import NodeConfig
from support.coscheduling import FakeView, pod, podgroup
from support.ledger import started_ledger

PODS = ("", "v1", "pods")


# Two nodes of 4 CPUs and 32 pod slots each, as TestPreFilter's.
TWO_NODES = [{"cpu": Fraction(4), "pods": Fraction(32)}] * 2


@pytest.mark.parametrize(
    ("case", "the_pod", "listed", "groups", "passes"),
    [
        (
            "pod does not belong to any pg",
            pod("p"),
            [pod("p1", "pg1"), pod("p2", "pg2")],
            [podgroup("pg1", 1), podgroup("pg2", 1)],
            True,
        ),
        (
            "pod belongs to a non-existent pg",
            pod("p", "pg-non-existent"),
            [],
            [podgroup("pg1", 1)],
            True,
        ),
        (
            "pod count less than minMember",
            pod("p", "pg1"),
            [pod("pg2-1", "pg2")],
            [podgroup("pg1", 2), podgroup("pg2", 2)],
            False,
        ),
        (
            "pod count equal minMember",
            pod("p1a", "pg1"),
            [pod("p1b", "pg1"), pod("p1c", "pg1")],
            [podgroup("pg1", 2), podgroup("pg2", 2)],
            True,
        ),
        (
            "cluster's resource satisfies minResource",
            pod("p1a", "pg1"),
            [pod("p1b", "pg1"), pod("p1c", "pg1")],
            [podgroup("pg1", 2, minResources={"cpu": "6"})],
            True,
        ),
        (
            "cluster's resource cannot satisfy minResource",
            pod("p1a", "pg1"),
            [pod("p1b", "pg1"), pod("p1c", "pg1")],
            [podgroup("pg1", 2, minResources={"cpu": "10"})],
            False,
        ),
    ],
)
def test_pre_filter(case, the_pod, listed, groups, passes):
    manager = PodGroupManager(FakeView(groups, listed, free=TWO_NODES), schedule_timeout=10)
    assert (manager.pre_filter(the_pod) is None) is passes, case


def test_pre_filter_messages():
    view = FakeView(
        [podgroup("pg1", 2, minResources={"cpu": "10"})], [pod("a", "pg1")], free=TWO_NODES
    )
    manager = PodGroupManager(view, schedule_timeout=10)
    assert manager.pre_filter(pod("p", "pg1")) == (
        "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2"
    )
    view.listed.append(pod("b", "pg1"))
    assert manager.pre_filter(pod("p", "pg1")) == "resource gap: map[cpu:2]"
    manager.backoff("ns/pg1", 5)
    assert manager.pre_filter(pod("p", "pg1")) == "podGroup ns/pg1 failed recently"


def test_a_group_that_passed_the_resource_check_skips_it_while_permitted():
    now = [0.0]
    view = FakeView(
        [podgroup("pg1", 2, minResources={"cpu": "6"})],
        [pod("a", "pg1"), pod("b", "pg1")],
        free=TWO_NODES,
    )
    manager = PodGroupManager(view, schedule_timeout=10, clock=lambda: now[0])
    assert manager.pre_filter(pod("a", "pg1")) is None
    view.free = [{"cpu": Fraction(1), "pods": Fraction(32)}]  # its first member took the room
    assert manager.pre_filter(pod("b", "pg1")) is None
    now[0] = 10.0  # the permit timeout has passed: checked again
    assert manager.pre_filter(pod("b", "pg1")) == "resource gap: map[cpu:5]"
    manager.permitted.add("ns/pg1", 10)
    manager.delete_permitted("ns/pg1")  # PostFilter and Unreserve forget it
    assert manager.pre_filter(pod("b", "pg1")) == "resource gap: map[cpu:5]"


def test_min_member_pod_slots_are_part_of_the_resource_check():
    view = FakeView(
        [podgroup("pg1", 3, minResources={"cpu": "1"})],
        [pod(n, "pg1") for n in "abc"],
        free=[{"cpu": Fraction(8), "pods": Fraction(2)}],
    )
    assert PodGroupManager(view, 10).pre_filter(pod("a", "pg1")) == "resource gap: map[pods:1]"


@pytest.mark.parametrize(
    ("case", "the_pod", "assigned", "groups", "verdict"),
    [
        (
            "pod does not belong to any pg",
            pod("p"),
            [],
            [podgroup("pg1", 2)],
            Verdict.NOT_SPECIFIED,
        ),
        (
            "pod specifies a non-existent pg",
            pod("p", "pg-non-existent"),
            [],
            [podgroup("pg1", 2)],
            Verdict.NOT_FOUND,
        ),
        (
            "pod belongs to a pg that doesn't have quorum",
            pod("p", "pg1"),
            [],
            [podgroup("pg1", 2)],
            Verdict.WAIT,
        ),
        (
            "pod belongs to a pg that have quorum satisfied",
            pod("p1a", "pg1"),
            [pod("p1b", "pg1", node="node")],
            [podgroup("pg1", 2)],
            Verdict.SUCCESS,
        ),
    ],
)
def test_permit(case, the_pod, assigned, groups, verdict):
    manager = PodGroupManager(FakeView(groups, assigned=assigned), schedule_timeout=10)
    key = f"ns/{the_pod['metadata']['name']}"
    assert manager.permit(the_pod, key)[0] == verdict, case


def test_the_first_member_to_wait_wakes_its_siblings_the_next_do_not():
    view = FakeView([podgroup("pg1", 3)])
    manager = PodGroupManager(view, schedule_timeout=10)
    assert manager.permit(pod("a", "pg1"), "ns/a") == (Verdict.WAIT, True)
    view.assigned.append(pod("a", "pg1", node="n"))
    assert manager.permit(pod("b", "pg1"), "ns/b") == (Verdict.WAIT, False)
    view.assigned.append(pod("b", "pg1", node="n"))
    # the pod asking is not counted among the assigned (it is assumed already)
    view.assigned.append(pod("c", "pg1", node="n"))
    assert manager.permit(pod("c", "pg1"), "ns/c") == (Verdict.SUCCESS, False)


def test_wait_seconds_prefer_the_group_then_the_plugin_then_sixty():
    with_timeout = PodGroupSpec.parse(podgroup("pg", 2, scheduleTimeoutSeconds=3))
    without = PodGroupSpec.parse(podgroup("pg", 2))
    assert PodGroupManager(FakeView(), 10).wait_seconds(with_timeout) == 3
    assert PodGroupManager(FakeView(), 10).wait_seconds(without) == 10
    assert PodGroupManager(FakeView(), 0).wait_seconds(without) == 60


# -- the cluster's free room --------------------------------------------------------------------


@pytest.fixture
def two_nodes_of_three_cpus():
    """A started ledger over nodes ``node-a`` and ``node-b`` of 3 CPUs each."""
    nodes = [NodeConfig(name, cpu="3", memory="8Gi") for name in ("node-a", "node-b")]
    with started_ledger(*nodes, namespaces=("ns",)) as started:
        yield started


def bound(name: str, node: str, cpu: str, group: str | None = None) -> dict:
    body = pod(name, group, node=node)
    body["spec"]["containers"] = [
        {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
    ]
    return body


@pytest.mark.parametrize(
    ("case", "pods", "fits"),
    [
        ("Cluster resource enough", [bound("p1", "node-a", "2")], True),
        (
            "Cluster resource not enough",
            [bound("p1", "node-a", "2"), bound("p2", "node-b", "1")],
            False,
        ),
        (
            "Cluster resource enough as p1's resource needs to be excluded from minResources",
            [bound("p1", "node-a", "2", group="pg1"), bound("p2", "node-b", "1")],
            True,
        ),
    ],
)
def test_check_cluster_resource(two_nodes_of_three_cpus, case, pods, fits):
    registry, ledger = two_nodes_of_three_cpus
    for body in pods:
        registry.create(PODS, "ns", body)
    assert ledger.sync()
    group = [f"ns/{p['metadata']['name']}" for p in pods if p["metadata"].get("labels")]
    gap = check_cluster_resource(ledger.free_per_node(group), {"cpu": Fraction(4)})
    assert (gap == {}) is fits, case


def test_free_room_counts_pod_slots(two_nodes_of_three_cpus):
    registry, ledger = two_nodes_of_three_cpus
    registry.create(PODS, "ns", bound("p1", "node-a", "1", group="pg1"))
    assert ledger.sync()
    free = {f["cpu"]: f["pods"] for f in ledger.free_per_node()}
    assert free == {Fraction(2): Fraction(109), Fraction(3): Fraction(110)}
    assert sorted(f["pods"] for f in ledger.free_per_node(["ns/p1"])) == [110, 110]


def test_amounts_print_as_kubernetes_quantities():
    assert format_amount("cpu", Fraction(3, 2)) == "1500m"
    assert format_amount("cpu", Fraction(2)) == "2"
    assert format_amount("memory", Fraction(3 * 2**30)) == "3Gi"
    assert format_amount("memory", Fraction(1000)) == "1000"
    gap = {"pods": Fraction(1), "cpu": Fraction(1, 2)}
    assert resource_gap_message(gap) == "resource gap: map[cpu:500m pods:1]"
