"""The acceptance scenarios S1-S19 of the batch-scheduler spec, driven by ``run_once``.

Each test builds its own cluster (simulated kubelet, nodes from pools, one flavour with
``schedule_period=0``) and checks exactly the outcomes the spec states. S8 and S18 run the
real operator / the periodic loop and live in test/integration/gang.
"""

from __future__ import annotations

import pytest

from localcluster.nodepool import NodePool

BOTH = ["kube-batch", "volcano"]


def pool(name: str, count: int = 1, cpu: str = "4", memory: str = "8Gi", **extra) -> NodePool:
    return NodePool(name=name, count=count, cpu=cpu, memory=memory, **extra)


def condition_message(g, name: str) -> str:
    return g.condition(name)["message"]


@pytest.mark.parametrize("flavour", BOTH)
def test_s1_gang_all_or_nothing(gang, flavour):
    g = gang(flavour, [pool("n", 2)])
    g.podgroup("g", 3)
    for i in range(3):
        g.pod(f"g-{i}", "g", cpu="3")
    g.run(3)
    assert g.bound("g-0", "g-1", "g-2") == {"g-0": None, "g-1": None, "g-2": None}
    cond = g.condition("g")
    assert (cond["status"], cond["reason"]) == ("True", "NotEnoughResources")
    warnings = [e for e in g.events("g", "PodGroup") if e["reason"] == "Unschedulable"]
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"
    if flavour == "kube-batch":
        text = "0/2 nodes are available, 2 insufficient cpu."
        assert g.phase("g") == "Pending"
        assert cond["message"] == f"1/3 tasks in gang unschedulable: {text}"
        assert warnings[0]["message"] == f"1/3 tasks in gang unschedulable: {text}"
        for i in range(3):
            pc = g.pod_condition(f"g-{i}")
            assert (pc["status"], pc["reason"], pc["message"]) == ("False", "Unschedulable", text)
    else:
        fit = "pod group is not ready, 3 Pending, 3 minAvailable; Pending: 1 Unschedulable, 2 Schedulable"
        assert g.phase("g") == "Inqueue"
        assert cond["message"] == f"1/3 tasks in gang unschedulable: {fit}"
        assert warnings[0]["message"] == f"3/3 tasks in gang unschedulable: {fit}"
        for name, node in (("g-0", "n-0"), ("g-1", "n-1")):
            pc = g.pod_condition(name)
            assert (pc["reason"], pc["message"]) == (
                "Schedulable",
                f"Pod default/{name} can possibly be assigned to {node}",
            )
        pc = g.pod_condition("g-2")
        assert (pc["reason"], pc["message"]) == (
            "Unschedulable",
            "0/2 nodes are unavailable: 2 Insufficient cpu.",
        )

    g.add_node("n-2", cpu="4", memory="8Gi")
    g.run(1)
    assert g.bound("g-0", "g-1", "g-2") == {"g-0": "n-0", "g-1": "n-1", "g-2": "n-2"}
    assert g.phase("g") == "Running"
    for i in range(3):
        assert [e["reason"] for e in g.events(f"g-{i}") if e["type"] == "Normal"] == ["Scheduled"]
    if flavour == "volcano":
        assert g.condition("g", "Scheduled")["status"] == "True"
        normal = [e for e in g.events("g", "PodGroup") if e["type"] == "Normal"]
        assert [(e["reason"], e["message"]) for e in normal] == [
            ("Scheduled", "pod group is ready")
        ]


@pytest.mark.parametrize("flavour", BOTH)
def test_s2_placement(gang, flavour):
    g = gang(flavour, [pool("n", 2)])
    g.podgroup("g", 3)
    for i in range(3):
        g.pod(f"g-{i}", "g", cpu="2", memory="1Gi")
    g.run(1)
    assert g.bound("g-0", "g-1", "g-2") == {"g-0": "n-0", "g-1": "n-1", "g-2": "n-0"}
    assert g.phase("g") == "Running"


@pytest.mark.parametrize("flavour", BOTH)
def test_s3_incomplete_gang_waits(gang, flavour):
    g = gang(flavour, [pool("n", cpu="8")])
    g.podgroup("p", 4)
    for i in range(3):
        g.pod(f"p-{i}", "p", cpu="1")
    g.run(3)
    assert set(g.bound("p-0", "p-1", "p-2").values()) == {None}
    expected = {
        "kube-batch": "4/3 tasks in gang unschedulable: 0 nodes are available",
        "volcano": "4/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, "
        "4 minAvailable; Pending: 3 Unschedulable",
    }
    assert condition_message(g, "p") == expected[flavour]
    # no task was tried: Volcano repeats the gang message, kube-batch its fit text
    pod_message = expected[flavour] if flavour == "volcano" else "0 nodes are available"
    assert g.pod_condition("p-0")["message"] == pod_message
    g.pod("p-3", "p", cpu="1")
    g.run(1)
    assert set(g.bound("p-0", "p-1", "p-2", "p-3").values()) == {"n-0"}
    assert g.phase("p") == "Running"


@pytest.mark.parametrize("flavour", BOTH)
@pytest.mark.parametrize("worker_cpu", ["1", "3"])
def test_s4_best_effort_members(gang, flavour, worker_cpu):
    g = gang(flavour, [pool("n")])
    g.podgroup("g", 3)
    g.pod("w-0", "g", cpu=worker_cpu)
    g.pod("w-1", "g", cpu=worker_cpu)
    g.pod("ps-0", "g", memory=None)
    if worker_cpu == "1":
        g.run(1)
        assert set(g.bound("w-0", "w-1", "ps-0").values()) == {"n-0"}
    else:
        g.run(3)
        assert set(g.bound("w-0", "w-1", "ps-0").values()) == {None}


SEED_POOLS = [
    pool("cpu", cpu="8", memory="16Gi", labels={"resType": "CPU"}),
    pool("gpu", cpu="8", memory="32Gi", gpus=4, labels={"resType": "GPU"}),
]


def seed_001(g, flavour: str | None = None, task_spec: bool = False) -> None:
    """PodGroup tf-test: a CPU-only master (node selector) and a GPU worker (volcano#2937)."""
    g.podgroup("tf-test", 2, flavour=flavour)
    master = {"volcano.sh/task-spec": "master"} if task_spec else None
    worker = {"volcano.sh/task-spec": "worker"} if task_spec else None
    scheduler = flavour or None
    g.pod(
        "tf-test-master-0",
        "tf-test",
        cpu="1",
        memory="1Gi",
        annotations=master,
        scheduler=scheduler,
        nodeSelector={"resType": "CPU"},
    )
    g.pod(
        "tf-test-worker-0",
        "tf-test",
        cpu="1",
        memory="1Gi",
        gpus=1,
        annotations=worker,
        scheduler=scheduler,
    )


TASK_SPEC_MODE = {
    "configurations": [{"name": "allocate", "arguments": {"predicateErrorCache": "task-spec"}}]
}


def volcano_conf(mode: str) -> dict:
    import yaml

    from localcluster.batchscheduler.flavours import VOLCANO_CONF

    conf = yaml.safe_load(VOLCANO_CONF)
    conf["configurations"] = [{"name": "allocate", "arguments": {"predicateErrorCache": mode}}]
    return conf


def test_s5_seed_001_buggy_key(gang):
    g = gang("volcano", SEED_POOLS, conf=volcano_conf("task-spec"))
    seed_001(g)
    g.run(5)
    assert g.bound("tf-test-master-0", "tf-test-worker-0") == {
        "tf-test-master-0": None,
        "tf-test-worker-0": None,
    }
    assert g.phase("tf-test") == "Inqueue"
    assert condition_message(g, "tf-test") == (
        "1/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; "
        "Pending: 1 Schedulable, 1 Unschedulable"
    )
    reasons = {n: g.pod_condition(n) for n in ("tf-test-master-0", "tf-test-worker-0")}
    unschedulable = [c for c in reasons.values() if c["reason"] == "Unschedulable"]
    schedulable = [c for c in reasons.values() if c["reason"] == "Schedulable"]
    assert len(unschedulable) == 1 and len(schedulable) == 1
    assert unschedulable[0]["message"] == (
        "0/2 nodes are unavailable: 1 Insufficient nvidia.com/gpu, "
        "1 node(s) didn't match Pod's node affinity/selector."
    )
    assert schedulable[0]["message"] in (
        "Pod default/tf-test-master-0 can possibly be assigned to cpu-0",
        "Pod default/tf-test-worker-0 can possibly be assigned to gpu-0",
    )


def test_s6_seed_001_fixed_by_the_annotation(gang):
    g = gang("volcano", SEED_POOLS, conf=volcano_conf("task-spec"))
    seed_001(g, task_spec=True)
    g.run(1)
    assert g.bound("tf-test-master-0", "tf-test-worker-0") == {
        "tf-test-master-0": "cpu-0",
        "tf-test-worker-0": "gpu-0",
    }
    assert g.phase("tf-test") == "Running"


@pytest.mark.parametrize(
    ("flavour", "mode"),
    [
        ("volcano", "task-spec-nonempty"),
        ("volcano", "off"),
        ("volcano", None),
        ("kube-batch", None),
    ],
)
def test_s7_seed_001_fixed_by_the_scheduler(gang, flavour, mode):
    g = gang(flavour, SEED_POOLS, conf=volcano_conf(mode) if mode else None)
    seed_001(g, flavour=flavour)
    g.run(1)
    assert g.bound("tf-test-master-0", "tf-test-worker-0") == {
        "tf-test-master-0": "cpu-0",
        "tf-test-worker-0": "gpu-0",
    }
    assert g.phase("tf-test") == "Running"


@pytest.mark.parametrize("flavour", BOTH)
def test_s9_taints(gang, flavour):
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    g = gang(
        flavour,
        [
            pool("cpu", cpu="8", memory="16Gi"),
            pool("gpu", cpu="8", memory="32Gi", gpus=4, taints=[taint]),
        ],
    )
    g.podgroup("a", 1)
    g.pod("w-0", "a", cpu="1", gpus=1)
    g.run(2)
    assert g.node_of("w-0") is None
    if flavour == "kube-batch":
        assert condition_message(g, "a") == (
            "1/1 tasks in gang unschedulable: 0/1 nodes are available, 1 insufficient GPU."
        )
    else:
        assert g.pod_condition("w-0")["message"] == (
            "0/2 nodes are unavailable: 1 Insufficient nvidia.com/gpu, "
            "1 node(s) had untolerated taint {nvidia.com/gpu: present}."
        )
    toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    g.podgroup("b", 1)
    g.pod("w-1", "b", cpu="1", gpus=1, tolerations=[toleration])
    g.run(1)
    assert g.node_of("w-1") == "gpu-0"


@pytest.mark.parametrize("flavour", BOTH)
def test_s10_pod_count_and_the_shared_ledger(gang, flavour):
    from localcluster.testing import wait_for

    g = gang(flavour, [pool("n", cpu="8", memory="16Gi", pods=2)])
    g.pod("d-0", cpu="1", scheduler="default-scheduler")
    wait_for(lambda: g.node_of("d-0"), 30, what="d-0 bound by the default scheduler")
    g.podgroup("p", 2)
    g.pod("p-0", "p", cpu="1")
    g.pod("p-1", "p", cpu="1")
    g.run(2)
    assert g.bound("p-0", "p-1") == {"p-0": None, "p-1": None}
    if flavour == "kube-batch":
        assert condition_message(g, "p") == "1/2 tasks in gang unschedulable: 0 nodes are available"
    else:
        assert g.pod_condition("p-1")["message"] == (
            "0/1 nodes are unavailable: 1 node(s) pod number exceeded."
        )
    g.registry.delete(("", "v1", "pods"), "default", "d-0", grace_period_seconds=0)
    g.wait_gone("d-0")
    g.run(1)
    assert g.bound("p-0", "p-1") == {"p-0": "n-0", "p-1": "n-0"}


@pytest.mark.parametrize("flavour", BOTH)
def test_s11_job_priority(gang, flavour):
    g = gang(flavour, [pool("n")])
    g.priority_class("low", 10)
    g.priority_class("high", 1000)
    g.podgroup("a", 2, priorityClassName="low")
    g.podgroup("b", 2, priorityClassName="high")
    for name in ("a-0", "a-1"):
        g.pod(name, "a", cpu="2")
    for name in ("b-0", "b-1"):
        g.pod(name, "b", cpu="2")
    g.run(1)
    assert g.bound("a-0", "a-1", "b-0", "b-1") == {
        "a-0": None,
        "a-1": None,
        "b-0": "n-0",
        "b-1": "n-0",
    }
    expected = {
        "kube-batch": "2/2 tasks in gang unschedulable: 0/1 nodes are available, 1 insufficient cpu.",
        "volcano": "2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, "
        "2 minAvailable; Pending: 2 Unschedulable",
    }
    assert condition_message(g, "a") == expected[flavour]


def drf_scenario(g) -> None:
    g.podgroup("d", 3)
    for i in range(3):
        g.pod(f"d-{i}", "d", cpu="1")
    g.run(1)
    g.wait_running("d-0", "d-1", "d-2")
    g.run(1)
    gvr = g.flavour.podgroups
    g.registry.patch(gvr, "default", "d", {"spec": {"minMember": 4}}, "merge")
    g.pod("d-3", "d", cpu="1")
    g.podgroup("e", 2)
    g.pod("e-0", "e", cpu="2.5")
    g.pod("e-1", "e", cpu="2.5")
    g.run(1)


def test_s12_drf_order_and_the_unknown_phase(gang):
    g = gang("kube-batch", [pool("n", cpu="8", memory="16Gi")])
    drf_scenario(g)
    assert g.bound("e-0", "e-1", "d-3") == {"e-0": "n-0", "e-1": "n-0", "d-3": None}
    status = g.get_podgroup("d")["status"]
    assert (status["phase"], status["running"]) == ("Unknown", 3)
    assert condition_message(g, "d") == (
        "1/4 tasks in gang unschedulable: 0/1 nodes are available, 1 insufficient cpu."
    )


def test_s12_without_drf_creation_order_wins(gang):
    conf = {
        "actions": "allocate, backfill",
        "tiers": [
            {"plugins": [{"name": "priority"}, {"name": "gang"}]},
            {"plugins": [{"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"}]},
        ],
    }
    g = gang("kube-batch", [pool("n", cpu="8", memory="16Gi")], conf=conf)
    drf_scenario(g)
    assert g.bound("e-0", "e-1", "d-3") == {"e-0": None, "e-1": None, "d-3": "n-0"}
    assert (g.phase("e"), g.phase("d")) == ("Pending", "Running")


def test_s13_proportion(gang):
    g = gang("kube-batch", [pool("n", cpu="8", memory="32Gi")])
    g.queue("q1", 1)
    g.queue("q2", 3)
    for q in ("q1", "q2"):
        for i in range(8):
            g.podgroup(f"{q}-job-{i}", 1, queue=q)
            g.pod(f"{q}-job-{i}", f"{q}-job-{i}", cpu="1", memory=None)
    g.run(1)
    names = [f"{q}-job-{i}" for q in ("q1", "q2") for i in range(8)]
    expected = {"q1-job-0", "q1-job-1"} | {f"q2-job-{i}" for i in range(6)}
    assert {n for n in names if g.node_of(n)} == expected
    g.run(3)
    assert {n for n in names if g.node_of(n)} == expected


def test_s14_reclaim(gang):
    conf = {
        "actions": "reclaim, allocate, backfill",
        "tiers": [
            {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
            {"plugins": [{"name": n} for n in ("drf", "predicates", "proportion", "nodeorder")]},
        ],
    }
    g = gang("kube-batch", [pool("n")], conf=conf)
    g.queue("q1")
    g.queue("q2")
    g.podgroup("a", 1, queue="q1")
    for i in range(4):
        g.pod(f"a-{i}", "a", cpu="1", terminationGracePeriodSeconds=0)
    g.run(1)
    g.wait_running(*(f"a-{i}" for i in range(4)))
    g.podgroup("b", 1, queue="q2")
    g.pod("b-0", "b", cpu="1")
    evicted = []
    from localcluster.testing import wait_for

    def cycle() -> bool:
        summary = g.run(1)
        evicted.extend(summary.evicted)
        return bool(g.node_of("b-0"))

    wait_for(cycle, 5, interval=0.05, what="b-0 bound")
    assert evicted == ["default/a-3"]
    assert g.node_of("b-0") == "n-0"
    assert [(e["reason"], e["message"]) for e in g.events("a", "PodGroup")] == [
        ("Evict", "reclaim")
    ]
    for i in range(3):
        assert g.get_pod(f"a-{i}")["status"]["phase"] == "Running"


def test_s15_preempt(gang):
    conf = {
        "actions": "enqueue, allocate, backfill, preempt",
        "tiers": [
            {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
            {
                "plugins": [
                    {"name": "drf", "enablePreemptable": False},
                    {"name": "predicates"},
                    {"name": "proportion"},
                    {"name": "nodeorder"},
                ]
            },
        ],
    }
    g = gang("volcano", [pool("n")], conf=conf)
    g.priority_class("low", 10)
    g.priority_class("high", 1000)
    g.podgroup("l", 1, priorityClassName="low")
    for i in range(4):
        g.pod(f"l-{i}", "l", cpu="1", priorityClassName="low", terminationGracePeriodSeconds=0)
    g.run(1)
    g.wait_running(*(f"l-{i}" for i in range(4)))
    g.podgroup("h", 2, priorityClassName="high")
    g.pod("h-0", "h", cpu="1", priorityClassName="high")
    g.pod("h-1", "h", cpu="1", priorityClassName="high")
    evicted = []
    from localcluster.testing import wait_for

    def cycle() -> bool:
        evicted.extend(g.run(1).evicted)
        return bool(g.node_of("h-0") and g.node_of("h-1"))

    wait_for(cycle, 5, interval=0.05, what="h-0 and h-1 bound")
    assert sorted(evicted) == ["default/l-2", "default/l-3"]
    for name in ("l-2", "l-3"):
        pod_events = [(e["type"], e["reason"], e["message"]) for e in g.events(name)]
        assert ("Warning", "Evict", "Pod is evicted, because of preempt") in pod_events
    group_events = [(e["type"], e["reason"], e["message"]) for e in g.events("l", "PodGroup")]
    assert group_events.count(("Normal", "Evict", "preempt")) == 2
    assert g.bound("h-0", "h-1") == {"h-0": "n-0", "h-1": "n-0"}
    for name in ("l-0", "l-1"):
        assert g.get_pod(name)["status"]["phase"] == "Running"


@pytest.mark.parametrize("flavour", BOTH)
def test_s16_lifecycle_and_counters(gang, flavour):
    from localcluster.testing import wait_for

    g = gang(flavour, [pool("n")])
    g.podgroup("p", 2)
    g.run(1)
    first = {"kube-batch": "Pending", "volcano": "Inqueue"}[flavour]
    assert g.phase("p") == first
    if flavour == "volcano":
        assert condition_message(g, "p") == (
            "2/0 tasks in gang unschedulable: pod group is not ready, 2 minAvailable"
        )
    g.pod("p-0", "p", cpu="1", run_seconds=1, restartPolicy="Never")
    g.pod("p-1", "p", cpu="1", run_seconds=1, restartPolicy="Never")
    g.run(1)
    assert g.phase("p") == "Running"

    def counted(field: str, value: int):
        def check() -> bool:
            g.run(1)
            return (g.get_podgroup("p")["status"].get(field) or 0) == value

        return check

    wait_for(counted("running", 2), 30, what="running: 2")
    wait_for(counted("succeeded", 2), 30, what="succeeded: 2")
    status = g.get_podgroup("p")["status"]
    assert status.get("running", 0) == 0
    assert status["phase"] == {"kube-batch": "Running", "volcano": "Completed"}[flavour]
    before = len([e for e in g.events("p", "PodGroup") if e["reason"] == "Unschedulable"])
    g.run(2)
    after = len([e for e in g.events("p", "PodGroup") if e["reason"] == "Unschedulable"])
    assert after == before


def test_s17_no_annotation_no_gang(gang):
    g = gang("kube-batch", [pool("n", cpu="2")])
    owner = g.registry.create(("", "v1", "configmaps"), "default", {"metadata": {"name": "owner"}})
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }
    for i in range(3):
        body = {
            "metadata": {"name": f"o-{i}", "namespace": "default", "ownerReferences": [ref]},
            "spec": {
                "schedulerName": "kube-batch",
                "containers": [
                    {
                        "name": "c",
                        "image": "x",
                        "resources": {"requests": {"cpu": "1", "memory": "256Mi"}},
                    }
                ],
            },
        }
        g.registry.create(("", "v1", "pods"), "default", body)
    g.run(1)
    assert g.bound("o-0", "o-1", "o-2") == {"o-0": "n-0", "o-1": "n-0", "o-2": None}
    pc = g.pod_condition("o-2")
    assert (pc["status"], pc["reason"], pc["message"]) == (
        "False",
        "Unschedulable",
        "0/1 nodes are available, 1 insufficient cpu.",
    )
    items, _ = g.registry.list(g.flavour.podgroups, "default")
    assert items == []
    events, _ = g.registry.list(("", "v1", "events"), "default")
    assert not [e for e in events if e["involvedObject"].get("kind") == "PodGroup"]


def test_s19_missing_queue(gang):
    g = gang("volcano", [pool("n")])
    g.podgroup("m", 1, queue="nope")
    g.pod("m-0", "m", cpu="1")
    g.run(3)
    assert g.node_of("m-0") is None
    assert "status" not in g.get_podgroup("m")
    g.queue("nope", 1)
    g.run(2)
    assert g.node_of("m-0") == "n-0"
    assert g.phase("m") == "Running"
