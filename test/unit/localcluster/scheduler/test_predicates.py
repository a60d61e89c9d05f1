"""Scheduler predicates: requests, node selector/affinity, messages, node choice."""

from fractions import Fraction

import pytest

from localcluster.scheduler.predicates import (
    REASON_AFFINITY,
    NodeInfo,
    fit_reasons,
    match_expression,
    nonzero_requests,
    pod_requests,
    select_node,
    unschedulable_message,
)
from localcluster.scheduler.quantity import parse_quantity


def node(name, cpu="4", memory="8Gi", gpus=0, pods=110, labels=None, ready=True, cordoned=False):
    allocatable = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"unschedulable": True} if cordoned else {},
        "status": {
            "allocatable": allocatable,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def pod(requests=None, limits=None, selector=None, affinity_terms=None, init=None):
    container = {"name": "c", "resources": {}}
    if requests:
        container["resources"]["requests"] = requests
    if limits:
        container["resources"]["limits"] = limits
    spec = {"containers": [container, {"name": "side"}]}
    if selector:
        spec["nodeSelector"] = selector
    if affinity_terms is not None:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": affinity_terms
                }
            }
        }
    if init:
        spec["initContainers"] = [{"name": "init", "resources": {"requests": init}}]
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": spec}


@pytest.mark.parametrize(
    "text,expected",
    [
        ("500m", Fraction(1, 2)),
        ("2", Fraction(2)),
        ("1Gi", Fraction(2**30)),
        ("128M", Fraction(128 * 10**6)),
        ("1e3", Fraction(1000)),
        ("0.5", Fraction(1, 2)),
    ],
)
def test_parse_quantity(text, expected):
    assert parse_quantity(text) == expected


def test_parse_quantity_rejects_garbage():
    with pytest.raises(ValueError):
        parse_quantity("lots")


def test_limits_stand_in_for_requests_and_init_containers_take_the_max():
    p = pod(limits={"nvidia.com/gpu": "1", "cpu": "1"}, requests={"cpu": "500m"}, init={"cpu": "2"})
    assert pod_requests(p) == {"cpu": Fraction(2), "nvidia.com/gpu": Fraction(1)}


def test_insufficient_resources_count_bound_pods():
    info = NodeInfo(node("n1", cpu="2", gpus=1))
    info.add_pod(pod(requests={"cpu": "1500m"}))
    assert fit_reasons(pod(requests={"cpu": "500m"}), info) == []
    assert fit_reasons(pod(requests={"cpu": "501m"}), info) == ["Insufficient cpu"]
    assert fit_reasons(pod(limits={"nvidia.com/gpu": "2"}), info) == ["Insufficient nvidia.com/gpu"]
    info.remove_pod(pod(requests={"cpu": "1500m"}))
    assert fit_reasons(pod(requests={"cpu": "2"}), info) == []


def test_pod_count_limit():
    info = NodeInfo(node("n1", pods=1))
    info.add_pod(pod())
    assert fit_reasons(pod(), info) == ["Too many pods"]


def test_node_selector_and_unready_or_cordoned_nodes():
    gpu_node = NodeInfo(node("n1", labels={"accel": "v100"}))
    assert fit_reasons(pod(selector={"accel": "v100"}), gpu_node) == []
    assert fit_reasons(pod(selector={"accel": "k80"}), gpu_node) == [REASON_AFFINITY]
    assert fit_reasons(pod(), NodeInfo(node("n2", cordoned=True))) == ["node(s) were unschedulable"]
    assert fit_reasons(pod(), NodeInfo(node("n3", ready=False)))[0].startswith(
        "node(s) had untolerated taint"
    )


def test_a_pod_tolerating_the_unschedulable_taint_goes_onto_a_cordoned_node():
    """kube-scheduler's NodeUnschedulable filter: a DaemonSet's pod tolerates a cordon."""
    cordoned = NodeInfo(node("n1", cordoned=True))
    tolerant = pod()
    tolerant["spec"]["tolerations"] = [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert fit_reasons(tolerant, cordoned) == []
    other = pod()
    other["spec"]["tolerations"] = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}]
    assert fit_reasons(other, cordoned) == ["node(s) were unschedulable"]


@pytest.mark.parametrize(
    "operator,values,value,expected",
    [
        ("In", ["a", "b"], "a", True),
        ("In", ["a"], None, False),
        ("NotIn", ["a"], "b", True),
        ("NotIn", ["a"], None, True),
        ("NotIn", ["a"], "a", False),
        ("Exists", [], "x", True),
        ("Exists", [], None, False),
        ("DoesNotExist", [], None, True),
        ("DoesNotExist", [], "x", False),
        ("Gt", ["3"], "4", True),
        ("Gt", ["3"], "3", False),
        ("Lt", ["3"], "2", True),
        ("Lt", ["3"], "x", False),
    ],
)
def test_match_expression(operator, values, value, expected):
    assert match_expression({"key": "k", "operator": operator, "values": values}, value) is expected


def test_required_node_affinity_terms_are_ored_and_expressions_anded():
    n = NodeInfo(node("n1", labels={"zone": "a", "gen": "5"}))
    both = [
        {"key": "zone", "operator": "In", "values": ["a"]},
        {"key": "gen", "operator": "Gt", "values": ["4"]},
    ]
    assert fit_reasons(pod(affinity_terms=[{"matchExpressions": both}]), n) == []
    wrong = [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]
    assert fit_reasons(pod(affinity_terms=wrong), n) == [REASON_AFFINITY]
    by_field = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    assert fit_reasons(pod(affinity_terms=[wrong[0], by_field]), n) == []
    assert fit_reasons(pod(affinity_terms=[{}]), n) == [REASON_AFFINITY]


def test_unschedulable_message_matches_the_real_wording():
    assert (
        unschedulable_message(2, [["Insufficient nvidia.com/gpu"], ["Insufficient nvidia.com/gpu"]])
        == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    )
    assert unschedulable_message(
        3, [["Insufficient cpu"], [REASON_AFFINITY], [REASON_AFFINITY]]
    ) == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."
    )
    assert unschedulable_message(0, []) == "no nodes available to schedule pods"


def test_select_node_prefers_least_allocated_and_reports_failures():
    busy, idle = NodeInfo(node("a")), NodeInfo(node("b"))
    busy.add_pod(pod(requests={"cpu": "3"}))
    chosen, message = select_node(pod(requests={"cpu": "1"}), [busy, idle])
    assert chosen is idle and message == ""
    chosen, message = select_node(pod(limits={"nvidia.com/gpu": "1"}), [busy, idle])
    assert chosen is None
    assert message == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."


MI = 2**20


def test_non_zero_requests_default_each_container_without_a_request():
    # "c" requests 500m cpu (0 memory, explicitly); "side" requests nothing
    p = pod(requests={"cpu": "500m", "memory": "0"})
    assert nonzero_requests(p) == {"cpu": Fraction(6, 10), "memory": 200 * MI}
    # as for fit, an init container raises the sum to its own (non-zero) request
    p = pod(requests={"cpu": "500m", "memory": "0"}, init={"cpu": "4"})
    assert nonzero_requests(p) == {"cpu": Fraction(4), "memory": 200 * MI}
    assert nonzero_requests(pod(limits={"memory": "1Gi"})) == {
        "cpu": Fraction(2, 10),
        "memory": 1024 * MI + 200 * MI,
    }


def test_node_info_adds_and_removes_non_zero_requests():
    info = NodeInfo(node("n1"))
    info.add_pod(pod())
    info.add_pod(pod(requests={"cpu": "1"}))
    assert info.nonzero == {"cpu": Fraction(13, 10), "memory": 800 * MI}
    assert info.requested == {"cpu": 1}
    info.remove_pod(pod())
    assert info.nonzero == {"cpu": Fraction(11, 10), "memory": 400 * MI}


def test_select_node_spreads_pods_without_requests():
    small, empty = NodeInfo(node("a")), NodeInfo(node("b"))
    small.add_pod(pod(requests={"cpu": "500m", "memory": "1000Mi"}))
    chosen = []
    for _ in range(6):
        best, _message = select_node(pod(), [small, empty])
        assert best is not None
        best.add_pod(pod())
        chosen.append(best.name)
    # "b" until it holds as much as "a" (600m, 1200Mi), then ties go to the node with fewer pods
    assert chosen == ["b", "b", "b", "a", "b", "a"]


def test_a_pod_without_requests_fits_a_node_whose_cpu_is_all_requested():
    full = NodeInfo(node("a", cpu="1", memory="1Gi", pods=30))
    full.add_pod(pod(requests={"cpu": "1", "memory": "1Gi"}))
    for _ in range(28):
        full.add_pod(pod())
    assert fit_reasons(pod(), full) == []
    assert select_node(pod(), [full]) == (full, "")
    full.add_pod(pod())
    assert fit_reasons(pod(), full) == ["Too many pods"]


def test_a_huge_exponent_is_beyond_every_node_at_once():
    """``1e999999999`` cores: 10^999999999 would take the scheduler minutes to compute; the
    amount is read as apimachinery's int64 maximum, and a tiny one as nothing."""
    import time

    from localcluster.scheduler.quantity import MAX_QUANTITY

    started = time.monotonic()
    assert parse_quantity("1e999999999") == MAX_QUANTITY
    assert parse_quantity("-1e999999999") == -MAX_QUANTITY
    assert parse_quantity("1e-999999999") == 0
    assert parse_quantity("15e2") == 1500
    assert time.monotonic() - started < 1.0
