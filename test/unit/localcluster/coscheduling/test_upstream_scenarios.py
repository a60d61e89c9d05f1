"""scheduler-plugins v0.28.9's integration scenarios for coscheduling
(``test/integration/coscheduling_test.go``: ``TestCoschedulingPlugin`` and
``TestPodgroupBackoff``), each on its own local cluster: which pods end up scheduled when
gangs of different sizes, priorities and minResources compete for one node, and a gang that
can never fit must not keep a small one from being scheduled."""

from __future__ import annotations

import pytest

from localcluster.nodepool import NodePool

MID, HIGH = 100, 1000


def gang(prefix: str, group: str, count: int, memory: str, priority: int = MID) -> list:
    return [(f"{prefix}-{i}", group, memory, priority) for i in range(1, count + 1)]


def interleave(*gangs: list) -> list:
    out = []
    for i in range(max(len(g) for g in gangs)):
        out += [g[i] for g in gangs if i < len(g)]
    return out


# (case, PodGroups: name -> (minMember, minResources memory or None), pods in creation order
# as (name, group, memory request, priority), the pods that must end up scheduled)
CASES = [
    (
        "equal priority, sequentially pg1 meet min and pg2 not meet min",
        {"pg1-1": (3, None), "pg1-2": (4, None)},
        gang("t1-p1", "pg1-1", 3, "50") + gang("t1-p2", "pg1-2", 4, "100"),
        ["t1-p1-1", "t1-p1-2", "t1-p1-3"],
    ),
    (
        "equal priority, not sequentially pg1 meet min and pg2 not meet min",
        {"pg2-1": (3, None), "pg2-2": (4, None)},
        interleave(gang("t2-p1", "pg2-1", 3, "50"), gang("t2-p2", "pg2-2", 4, "100")),
        ["t2-p1-1", "t2-p1-2", "t2-p1-3"],
    ),
    (
        "equal priority, not sequentially pg1 not meet min and 3 regular pods",
        {"pg3-1": (4, None)},
        [
            ("t3-p1-1", "pg3-1", "50", MID),
            ("t3-p2", None, "100", MID),
            ("t3-p1-2", "pg3-1", "50", MID),
            ("t3-p3", None, "100", MID),
            ("t3-p1-3", "pg3-1", "50", MID),
        ],
        ["t3-p2", "t3-p3"],
    ),
    (
        "different priority, sequentially pg1 meet min and pg2 meet min",
        {"pg4-1": (3, None), "pg4-2": (3, None)},
        gang("t4-p1", "pg4-1", 3, "100") + gang("t4-p2", "pg4-2", 3, "50", HIGH),
        ["t4-p2-1", "t4-p2-2", "t4-p2-3"],
    ),
    (
        "different priority, not sequentially pg1 meet min and pg2 meet min",
        {"pg5-1": (3, None), "pg5-2": (3, None)},
        interleave(gang("t5-p1", "pg5-1", 3, "100"), gang("t5-p2", "pg5-2", 3, "50", HIGH)),
        ["t5-p2-1", "t5-p2-2", "t5-p2-3"],
    ),
    (
        "different priority, not sequentially pg1 meet min and 3 regular pods",
        {"pg6-1": (3, None)},
        interleave(
            gang("t6-p1", "pg6-1", 3, "50"),
            [
                ("t6-p2", None, "100", HIGH),
                ("t6-p3", None, "100", HIGH),
                ("t6-p4", None, "100", HIGH),
            ],
        ),
        ["t6-p2", "t6-p3", "t6-p4"],
    ),
    (
        "equal priority, not sequentially pg1 meet min and p2 p3 not meet min",
        {"pg7-1": (3, None), "pg7-2": (4, None), "pg7-3": (4, None)},
        interleave(
            gang("t7-p1", "pg7-1", 3, "50"),
            gang("t7-p2", "pg7-2", 4, "100"),
            gang("t7-p3", "pg7-3", 4, "100"),
        ),
        ["t7-p1-1", "t7-p1-2", "t7-p1-3"],
    ),
    (
        "equal priority, not sequentially pg1 meet min and p2 p3 not meet min, pgs have min resources",
        {"pg8-1": (3, "150"), "pg8-2": (4, "400"), "pg8-3": (4, "400")},
        interleave(
            gang("t8-p1", "pg8-1", 3, "50"),
            gang("t8-p2", "pg8-2", 4, "100"),
            gang("t8-p3", "pg8-3", 4, "100"),
        ),
        ["t8-p1-1", "t8-p1-2", "t8-p1-3"],
    ),
    (
        "equal priority, not sequentially pg1 meet min and pg2 not meet min, pgs have min resources",
        {"pg9-1": (3, "150"), "pg9-2": (4, "400")},
        interleave(gang("t9-p1", "pg9-1", 3, "50"), gang("t9-p2", "pg9-2", 4, "100")),
        ["t9-p1-1", "t9-p1-2", "t9-p1-3"],
    ),
]


@pytest.mark.parametrize(
    ("case", "groups", "members", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_coscheduling_plugin(cosched, case, groups, members, expected):
    # one node with 300 bytes of memory and 32 pod slots; the plugin's permit timeout is 3 s
    c = cosched(
        [NodePool(name="fake-node", cpu="8", memory="300", pods=32)],
        {"permitWaitingTimeSeconds": 3},
    )
    # every pod is queued before the first is tried, as upstream's test creates them in
    # microseconds: the queue's order decides
    c.scheduler.pause()
    for name, (min_member, memory) in groups.items():
        c.podgroup(name, min_member, **({"minResources": {"memory": memory}} if memory else {}))
    for name, group, memory, priority in members:
        c.pod(name, group, cpu=None, memory=memory, priority=priority)
    c.scheduler.resume()
    c.wait_bound(*expected, timeout=60)
    # and no part of a gang that cannot be whole beside them was bound
    others = [name for name, *_ in members if name not in expected]
    assert c.bound(*others) == dict.fromkeys(others)


def test_podgroup_backoff(cosched):
    """A gang of six 4-CPU pods (minMember 6) cannot fit on nodes of 6, 2, 2 and 2 CPUs; with a
    PodGroup back-off of 1 s it does not keep the one-pod gang from being scheduled."""
    pools = [
        NodePool(name="fake-node-1", cpu="6", memory="8Gi", pods=32),
        NodePool(name="fake-node-2", count=3, cpu="2", memory="8Gi", pods=32),
    ]
    c = cosched(pools, {"permitWaitingTimeSeconds": 3, "podGroupBackoffSeconds": 1})
    c.scheduler.pause()
    c.podgroup("pg1-1", 6)
    c.podgroup("pg2-1", 1)
    for i in range(1, 7):
        c.pod(f"t1-p1-{i}", "pg1-1", cpu="4", priority=MID)
    c.pod("t1-p2-1", "pg2-1", cpu="2", priority=MID)
    c.scheduler.resume()
    c.wait_bound("t1-p2-1", timeout=60)
    gang = [f"t1-p1-{i}" for i in range(1, 7)]
    assert c.bound(*gang) == dict.fromkeys(gang)
