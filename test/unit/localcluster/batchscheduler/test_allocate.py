"""allocate's queue turns: a queue goes back into the queue heap after its turn.

A queue pushed back before its turn is judged by the share it had before the turn, so it wins
the next pop again although its share has grown (kube-batch v0.4.2 pushed it back after the
turn; Volcano did so from v1.10.0, commit "put back the queue to priority queue after job's
resource allocating finished"). With the proportion plugin's queue order each turn must go to
the queue with the lowest allocated/deserved share, so the slots a cluster has left are shared
by weight.

The node here is shared with a pod of the default scheduler, so the room left is smaller than
what proportion hands out (it divides the whole cluster): the order of turns decides who gets
the room before any queue is overused. Pods ask for CPU only (memory then never limits a
queue, as in scenario S13).
"""

from __future__ import annotations

import pytest

from localcluster.nodepool import NodePool
from localcluster.testing import wait_for

BOTH = ["kube-batch", "volcano"]


def _fill(g, queues: dict[str, int], jobs_per_queue: int, used_cpu: str) -> None:
    """A default-scheduler pod holding ``used_cpu`` of the node; per queue
    (name -> weight) ``jobs_per_queue`` one-pod gangs asking for 1 CPU each."""
    g.pod("other", cpu=used_cpu, memory=None, scheduler="default-scheduler")
    wait_for(lambda: g.node_of("other"), 30, what="the default scheduler binds 'other'")
    for name, weight in queues.items():
        g.queue(name, weight)
        for i in range(jobs_per_queue):
            g.podgroup(f"{name}-{i}", 1, queue=name)
            g.pod(f"{name}-{i}", f"{name}-{i}", cpu="1", memory=None)


def _bound_per_queue(g, queues: dict[str, int], jobs_per_queue: int) -> dict[str, int]:
    return {
        name: sum(1 for i in range(jobs_per_queue) if g.node_of(f"{name}-{i}")) for name in queues
    }


@pytest.mark.parametrize("flavour", BOTH)
def test_two_queues_share_the_room_left_by_weight(gang, flavour):
    # Total 8 CPU: q1 (weight 1) deserves 2, q2 (weight 3) deserves 6; 4 CPU are free. Turns by
    # lowest share: q1 (0 -> 1/2), q2 (0 -> 1/6), q2 (-> 2/6), q2 (-> 3/6). Pushed back before
    # its turn, q1 would take the first two slots and q2 the other two.
    g = gang(flavour, [NodePool(name="n", cpu="8", memory="8Gi")])
    queues = {"q1": 1, "q2": 3}
    _fill(g, queues, 8, used_cpu="4")
    g.run(1)
    assert _bound_per_queue(g, queues, 8) == {"q1": 1, "q2": 3}
    g.run(2)
    assert _bound_per_queue(g, queues, 8) == {"q1": 1, "q2": 3}


@pytest.mark.parametrize("flavour", BOTH)
def test_three_queues_share_the_room_left_by_weight(gang, flavour):
    # Total 12 CPU: deserved 2, 4, 6 for weights 1, 2, 3; 6 CPU are free. Turns: q1 (1/2),
    # q2 (1/4), q3 (1/6), q3 (2/6), q2 (2/4), q3 (3/6): 1, 2 and 3 slots. Pushed back before
    # the turn, each queue took two turns in a row: 2, 2, 2.
    g = gang(flavour, [NodePool(name="n", cpu="12", memory="8Gi")])
    queues = {"q1": 1, "q2": 2, "q3": 3}
    _fill(g, queues, 12, used_cpu="6")
    g.run(1)
    assert _bound_per_queue(g, queues, 12) == {"q1": 1, "q2": 2, "q3": 3}


@pytest.mark.parametrize("flavour", BOTH)
def test_a_queue_whose_share_grew_waits_for_the_other(gang, flavour):
    # Volcano's own test for the fix (allocate_test.go TestFareShareAllocate, second case):
    # node 5 CPU / 5G; q-1 runs a 1 CPU pod and has a 2 CPU one pending; q-2 has a 2 CPU and
    # a 1 CPU one pending, equal weights (deserved 2.5 CPU each). q-2 goes first (share 0),
    # its share then passes q-1's, so q-1's 2 CPU pod goes next and the 1 CPU one of q-2
    # finds no room. Pushed back before its turn, q-2 went twice and q-1's pod never fit.
    g = gang(flavour, [NodePool(name="node", cpu="5", memory="5G")])
    g.queue("q-1")
    g.queue("q-2")
    g.podgroup("pg-small-1", 1, queue="q-1")
    g.pod("pod-small-1", "pg-small-1", cpu="1", memory="1G")
    g.run(1)
    assert g.node_of("pod-small-1") == "node-0"
    g.wait_running("pod-small-1")
    g.podgroup("pg-large-1", 1, queue="q-1")
    g.pod("pod-large-1", "pg-large-1", cpu="2", memory="2G")
    g.podgroup("pg-large-2", 1, queue="q-2")
    g.pod("pod-large-2", "pg-large-2", cpu="2", memory="2G")
    g.podgroup("pg-small-2", 1, queue="q-2")
    g.pod("pod-small-2", "pg-small-2", cpu="1", memory="1G")
    g.run(1)
    assert g.bound("pod-large-1", "pod-large-2", "pod-small-2") == {
        "pod-large-1": "node-0",
        "pod-large-2": "node-0",
        "pod-small-2": None,
    }
