"""The scheduling queue: sorted active pods, per-pod back-off, unschedulable pods moved by
cluster events, siblings activated at once."""

from __future__ import annotations

from localcluster.coscheduling.queue import SchedulingQueue


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def queue(clock: Clock, order: dict[str, int] | None = None) -> SchedulingQueue:
    rank = order or {}
    return SchedulingQueue(lambda key, first: (rank.get(key, 0), first, key), clock, clock)


def test_active_pods_come_out_in_sort_order():
    clock = Clock()
    q = queue(clock, {"b": 0, "a": 1})
    q.add("a")
    q.add("b")
    q.add("a")  # already queued: one entry
    assert [q.pop(), q.pop(), q.pop()] == ["b", "a", None]


def test_a_failure_parks_the_pod_until_an_event_then_it_backs_off():
    clock = Clock()
    q = queue(clock)
    q.add("p")
    assert q.pop() == "p"
    q.failed("p")  # nothing happened meanwhile: unschedulable
    clock.now += 2
    assert q.pop() is None
    q.move_all()  # its 1 s back-off is over: active
    assert q.pop() == "p"
    q.failed("p")
    q.move_all()  # second attempt: 2 s of back-off from the failure
    clock.now += 1.5
    assert q.pop() is None
    assert q.next_due() == clock.now + 0.5
    clock.now += 0.5
    assert q.pop() == "p"


def test_an_event_during_the_attempt_backs_the_pod_off_at_once():
    clock = Clock()
    q = queue(clock)
    q.add("p")
    assert q.pop() == "p"
    q.move_all()
    q.failed("p")
    assert q.pop() is None
    clock.now += 1
    assert q.pop() == "p"


def test_back_off_doubles_up_to_ten_seconds_and_leftovers_are_retried():
    clock = Clock()
    q = queue(clock)
    q.add("p")
    for _ in range(12):
        assert q.pop() == "p"
        q.failed("p")
        q.move_all()
        clock.now = q.next_due() or clock.now
    assert q.backoff_until("p") - clock.now <= 10
    q.pop()
    q.failed("p")  # no event: parked, then retried after five seconds regardless
    clock.now += 5
    q.pop()  # moves the leftover into back-off, which is long over
    assert "p" in q


def test_activated_siblings_skip_their_back_off():
    clock = Clock()
    q = queue(clock)
    for key in ("a", "b"):
        q.add(key)
        assert q.pop() == key
        q.move_all()
        q.failed(key)
    assert q.pop() is None
    q.activate(["a", "b", "unknown"])
    assert [q.pop(), q.pop(), q.pop()] == ["a", "b", None]


def test_forget_drops_every_trace():
    clock = Clock()
    q = queue(clock)
    q.add("p")
    q.forget("p")
    assert q.pop() is None and len(q) == 0
