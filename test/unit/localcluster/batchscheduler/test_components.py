"""The batch scheduler's parts on their own: configuration, error cache, message texts,
conditions, proportion's hand-out rules, tier verdicts, node pools and the ledger."""

from __future__ import annotations

from fractions import Fraction

import pytest

from localcluster.batchscheduler import status
from localcluster.batchscheduler.api import JobInfo, TaskInfo, TaskStatus
from localcluster.batchscheduler.conf import ConfError, load_conf, parse_conf
from localcluster.batchscheduler.errcache import PredicateErrorCache
from localcluster.batchscheduler.flavours import KUBE_BATCH, VOLCANO
from localcluster.batchscheduler.plugins.proportion import QueueAttr, hand_out
from localcluster.batchscheduler.session import Session
from localcluster.kubelet.node import NodeConfig
from localcluster.nodepool import parse_node_pool, parse_taint
from support.ledger import started_ledger

GI = 2**30
MI = 2**20


def task(name: str, spec: str = "", status_: TaskStatus = TaskStatus.PENDING, **kw) -> TaskInfo:
    return TaskInfo(
        key=f"default/{name}",
        name=name,
        namespace="default",
        job="default/j",
        pod={},
        resreq=kw.get("resreq", {"cpu": Fraction(1)}),
        init_resreq=kw.get("resreq", {"cpu": Fraction(1)}),
        nonzero=kw.get("nonzero", {"cpu": 1000, "memory": 200 * MI * 1000}),
        status=status_,
        node=None,
        priority=1,
        created="",
        task_spec=spec,
    )


def job(min_member: int = 2, *tasks: TaskInfo) -> JobInfo:
    j = JobInfo("default/j", "default", "j", min_member, "default", 0, "", podgroup={})
    for t in tasks:
        j.add_task(t)
    return j


# -- configuration --------------------------------------------------------------------------


def test_defaults_are_upstreams_built_ins():
    kb, vc = load_conf(None, KUBE_BATCH), load_conf(None, VOLCANO)
    assert kb.actions == ("allocate", "backfill") and kb.error_cache == "off"
    assert kb.plugin_names() == ["priority", "gang", "drf", "predicates", "proportion", "nodeorder"]
    assert vc.actions == ("enqueue", "allocate", "backfill")
    assert vc.error_cache == "task-spec-nonempty"
    assert [p.name for p in vc.tiers[0]] == ["priority", "gang", "conformance"]


def test_unknown_actions_fail_and_unknown_plugins_are_skipped():
    with pytest.raises(ConfError, match="enqueue"):
        parse_conf({"actions": "enqueue, allocate"}, KUBE_BATCH)
    with pytest.raises(ConfError, match="shuffle"):
        parse_conf({"actions": "allocate, shuffle"}, VOLCANO)
    conf = parse_conf(
        {"actions": "allocate", "tiers": [{"plugins": [{"name": "binpack"}]}]}, VOLCANO
    )
    assert conf.tiers == ((),)


def test_hook_switches_in_both_spellings():
    data = {
        "actions": "allocate",
        "tiers": [
            {
                "plugins": [
                    {"name": "drf", "enablePreemptable": False},
                    {"name": "gang", "disableJobOrder": True},
                ]
            }
        ],
    }
    drf, gang = parse_conf(data, VOLCANO).tiers[0]
    assert not drf.enabled("Preemptable") and drf.enabled("JobOrder")
    assert not gang.enabled("JobOrder") and gang.enabled("JobReady")


@pytest.mark.parametrize(
    ("arguments", "mode"),
    [
        ({"predicateErrorCache": "task-spec"}, "task-spec"),
        ({"predicateErrorCacheEnable": False}, "off"),
        ({}, "task-spec-nonempty"),
    ],
)
def test_error_cache_argument(arguments, mode):
    data = {"actions": "allocate", "configurations": [{"name": "allocate", "arguments": arguments}]}
    assert parse_conf(data, VOLCANO).error_cache == mode


def test_bad_cache_mode_and_unreadable_files(tmp_path):
    bad = {
        "actions": "allocate",
        "configurations": [{"name": "allocate", "arguments": {"predicateErrorCache": "x"}}],
    }
    with pytest.raises(ConfError):
        parse_conf(bad, VOLCANO)
    assert load_conf(str(tmp_path / "missing.yaml"), VOLCANO) == load_conf(None, VOLCANO)
    path = tmp_path / "conf.yaml"
    path.write_text('actions: "allocate, backfill, preempt"\n')
    assert load_conf(str(path), KUBE_BATCH).actions == ("allocate", "backfill", "preempt")
    assert load_conf('actions: "allocate"\ntiers: []\n', KUBE_BATCH).actions == ("allocate",)


# -- predicate error cache ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "shared_without_spec", "shared_with_spec"),
    [("off", False, False), ("task-spec", True, True), ("task-spec-nonempty", False, True)],
)
def test_error_cache_modes(mode, shared_without_spec, shared_with_spec):
    cache = PredicateErrorCache(mode, "default/j")
    cache.record(task("a"), "gpu-0", ["node(s) didn't match Pod's node affinity/selector"])
    assert bool(cache.known_failures(task("b"))) == shared_without_spec
    cache.record(task("w-0", "worker"), "cpu-0", ["Insufficient nvidia.com/gpu"])
    assert bool(cache.known_failures(task("w-1", "worker"))) == shared_with_spec
    assert not cache.known_failures(task("m-0", "master"))


# -- texts and conditions --------------------------------------------------------------------


def test_kube_batch_fit_text_counts_only_cpu_memory_gpu():
    j = job(2)
    assert status.kube_batch_fit_text(j) == "0 nodes are available"
    j.fit_delta = {
        "a": ["cpu", "nvidia.com/gpu"],
        "b": ["cpu", "example.com/fpga"],
        "c": ["memory"],
    }
    assert status.kube_batch_fit_text(j) == (
        "0/3 nodes are available, 1 insufficient GPU, 1 insufficient memory, 2 insufficient cpu."
    )


def test_volcano_texts():
    errors = {
        "a": ["Insufficient cpu"],
        "b": ["Insufficient cpu"],
        "c": ["node(s) were unschedulable"],
    }
    assert status.node_errors_text(errors) == (
        "0/3 nodes are unavailable: 1 node(s) were unschedulable, 2 Insufficient cpu."
    )
    allocated_then_undone = task("a")
    allocated_then_undone.last_transaction = (TaskStatus.ALLOCATED, "n-0")
    pipelined_then_undone = task("b")
    pipelined_then_undone.last_transaction = (TaskStatus.PIPELINED, "n-1")
    j = job(3, allocated_then_undone, pipelined_then_undone, task("c", status_=TaskStatus.RUNNING))
    assert status.task_reason(j, pipelined_then_undone) == (
        "Unschedulable",
        "Pod default/b can possibly be assigned to n-1, once resource is released",
    )
    assert status.volcano_fit_text(j) == (
        "pod group is not ready, 1 Running, 2 Pending, 3 minAvailable; "
        "Pending: 1 Schedulable, 1 Unschedulable"
    )
    assert status.unschedulable_message(j, volcano=True).startswith("1/3 tasks in gang")
    assert status.unschedulable_message(j, volcano=False).startswith("0/3 tasks in gang")


def test_conditions_keep_their_transition_until_something_changes():
    j = job(1)
    cond = {
        "type": "Unschedulable",
        "status": "True",
        "reason": "NotEnoughResources",
        "message": "m",
    }
    status.set_condition(j, cond, "s1", "t1")
    status.set_condition(j, cond, "s2", "t2")
    assert (j.conditions[0]["transitionID"], j.conditions[0]["lastTransitionTime"]) == ("s1", "t1")
    status.set_condition(j, {**cond, "message": "n"}, "s3", "t3")
    assert len(j.conditions) == 1 and j.conditions[0]["transitionID"] == "s3"
    old = {"phase": "Pending", "conditions": [{**cond, "transitionID": "x"}]}
    assert not status.status_changed(
        {"phase": "Pending", "conditions": [{**cond, "transitionID": "y"}]}, old
    )
    assert status.status_changed({"phase": "Running", "conditions": old["conditions"]}, old)


@pytest.mark.parametrize(
    ("volcano", "statuses", "phase", "expected"),
    [
        (False, [TaskStatus.SUCCEEDED, TaskStatus.SUCCEEDED], "Running", "Running"),
        (True, [TaskStatus.SUCCEEDED, TaskStatus.SUCCEEDED], "Running", "Completed"),
        (True, [TaskStatus.PENDING], "Inqueue", "Inqueue"),
        (False, [TaskStatus.PENDING], "", "Pending"),
        (True, [TaskStatus.RUNNING, TaskStatus.BINDING], "Pending", "Running"),
    ],
)
def test_phase(volcano, statuses, phase, expected):
    j = job(2, *(task(f"t{i}", status_=s) for i, s in enumerate(statuses)))
    j.phase = phase
    assert status.phase_of(j, volcano) == expected


def test_phase_unknown_when_running_but_unschedulable():
    j = job(3, task("a", status_=TaskStatus.RUNNING), task("b"))
    j.unschedulable = True
    assert status.phase_of(j, volcano=False) == "Unknown"


# -- proportion -------------------------------------------------------------------------------


def queues(*specs: tuple[str, int, dict]) -> dict[str, QueueAttr]:
    return {n: QueueAttr(n, w, request={k: Fraction(v) for k, v in r.items()}) for n, w, r in specs}


def test_kube_batch_hand_out_meets_a_queue_on_any_dimension():
    """S13's numbers: CPU-only requests, so memory meets both queues in the first round."""
    attrs = queues(("q1", 1, {"cpu": 8}), ("q2", 3, {"cpu": 8}))
    hand_out(attrs, {"cpu": Fraction(8), "memory": Fraction(32 * GI)}, volcano=False)
    assert attrs["q1"].deserved == {"cpu": 2, "memory": 0}
    assert attrs["q2"].deserved == {"cpu": 6, "memory": 0}


def test_volcano_hand_out_redistributes_what_a_queue_does_not_need():
    attrs = queues(("q1", 1, {"cpu": 1}), ("q2", 1, {"cpu": 8}))
    hand_out(attrs, {"cpu": Fraction(8)}, volcano=True)
    assert attrs["q1"].deserved == {"cpu": 1}
    assert attrs["q2"].deserved == {"cpu": 7}


# -- tiers --------------------------------------------------------------------------------------


def test_the_first_tier_with_the_hook_decides_by_intersection():
    conf = parse_conf(
        {
            "actions": "allocate",
            "tiers": [
                {"plugins": [{"name": "gang"}, {"name": "conformance"}]},
                {"plugins": [{"name": "drf"}]},
            ],
        },
        VOLCANO,
    )
    ssn = Session(VOLCANO, conf, {}, {}, {}, writer=None)  # type: ignore[arg-type]
    a, b, c = task("a"), task("b"), task("c")
    ssn.register("gang", "Reclaimable", lambda _t, cands: [a, b])
    ssn.register("conformance", "Reclaimable", lambda _t, cands: [b, c])
    ssn.register("drf", "Reclaimable", lambda _t, cands: [a, b, c])
    assert ssn.victims("Reclaimable", a, [a, b, c]) == [b]
    ssn.register("gang", "Reclaimable", lambda _t, cands: [])
    assert ssn.victims("Reclaimable", a, [a, b, c]) == []  # an empty answer never falls through
    assert ssn.victims("Preemptable", a, [a, b, c]) == []  # nobody registered the hook


# -- node pools ----------------------------------------------------------------------------------


def test_node_pool_parsing():
    p = parse_node_pool(
        "name=gpu,count=2,cpu=16,memory=64Gi,gpus=4,pods=50,"
        "labels=resType=GPU;zone=a,taints=nvidia.com/gpu=present:NoSchedule;dedicated:NoExecute"
    )
    assert p.node_names() == ["gpu-0", "gpu-1"]
    assert (p.cpu, p.memory, p.gpus, p.pods) == ("16", "64Gi", 4, 50)
    assert p.labels == {"resType": "GPU", "zone": "a"}
    assert p.taints == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "dedicated", "effect": "NoExecute"},
    ]
    for bad in ("count=2", "name=x,colour=red", "name=x,labels=novalue"):
        with pytest.raises(ValueError):
            parse_node_pool(bad)
    with pytest.raises(ValueError, match="Effect|NoSchedule"):
        parse_taint("key=value:Sometimes")


# -- ledger -------------------------------------------------------------------------------------


@pytest.fixture
def one_node_ledger():
    """A started ledger over a registry holding one 2-cpu node ``n-0``."""
    with started_ledger(NodeConfig("n-0", cpu="2")) as started:
        yield started


def test_try_assume_all_is_all_or_nothing(one_node_ledger):
    _, ledger = one_node_ledger

    def pod(name: str, cpu: str) -> dict:
        container = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
        return {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [container]},
        }

    failures = ledger.try_assume_all([(pod("a", "1"), "n-0"), (pod("b", "2"), "n-0")])
    assert failures == {"default/b": ["Insufficient cpu"]}
    assert ledger.snapshot()["n-0"].pod_count == 0  # "a" was not kept either
    assert ledger.try_assume_all([(pod("a", "1"), "n-0"), (pod("b", "1"), "n-0")]) == {}
    assert ledger.snapshot()["n-0"].requested == {"cpu": 2}
    ledger.forget("default/a")
    assert ledger.snapshot()["n-0"].requested == {"cpu": 1}


def test_the_ledger_keeps_non_zero_requests_as_pods_come_and_go(one_node_ledger):
    registry, ledger = one_node_ledger
    bare = {"metadata": {"name": "a", "namespace": "default"}, "spec": {"containers": [{}]}}
    ledger.assume(bare, "n-0")
    info = ledger.snapshot()["n-0"]
    assert info.nonzero == {"cpu": Fraction(1, 10), "memory": 200 * MI}
    assert (info.requested, info.pod_count) == ({}, 1)
    body = {
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"nodeName": "n-0", "containers": [{"name": "c", "image": "x"}]},
    }
    registry.create(("", "v1", "pods"), "default", body)
    assert ledger.sync()
    assert ledger.snapshot()["n-0"].nonzero == {"cpu": Fraction(2, 10), "memory": 400 * MI}
    ledger.forget("default/a")
    registry.delete(("", "v1", "pods"), "default", "b", grace_period_seconds=0)
    assert ledger.sync()
    info = ledger.snapshot()["n-0"]
    assert (info.nonzero, info.pod_count) == ({"cpu": 0, "memory": 0}, 0)
