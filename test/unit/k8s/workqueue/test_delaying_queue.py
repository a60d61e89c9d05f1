"""Tests for the delaying queue, driven by a fake clock."""

import threading
import time

import pytest

from support.fake_clock import FakeClock
from tf_operator.k8s.workqueue import DelayingQueue


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        pause.wait(0.002)


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def q(clock):
    queue = DelayingQueue("", clock=clock)
    yield queue
    queue.shut_down()


def test_item_appears_only_after_its_delay(q, clock):
    q.add_after("a", 1.0)
    assert len(q) == 0 and q.pending_count() == 1
    clock.step(0.999)
    assert len(q) == 0  # cannot be ready: virtual time has not reached 1 s
    clock.step(0.001)
    wait_for(lambda: len(q) == 1)
    assert q.pending_count() == 0
    assert q.get() == ("a", False)


def test_non_positive_delay_adds_at_once(q):
    q.add_after("a", 0)
    q.add_after("b", -1)
    assert len(q) == 2


def test_items_become_ready_in_deadline_order(q, clock):
    q.add_after("late", 3)
    q.add_after("early", 1)
    q.add_after("middle", 2)
    clock.step(3)
    wait_for(lambda: len(q) == 3)
    assert [q.get()[0] for _ in range(3)] == ["early", "middle", "late"]


def test_stepwise_release(q, clock):
    for i, delay in enumerate((5, 1, 3)):
        q.add_after(i, delay)
    clock.step(1)
    wait_for(lambda: len(q) == 1)
    assert q.get()[0] == 1
    clock.step(2)
    wait_for(lambda: len(q) == 1)
    assert q.get()[0] == 2
    clock.step(2)
    wait_for(lambda: len(q) == 1)
    assert q.get()[0] == 0


def test_re_add_with_earlier_time_moves_item_forward_once(q, clock):
    q.add_after("a", 10)
    q.add_after("a", 1)
    assert q.pending_count() == 1
    clock.step(1)
    wait_for(lambda: len(q) == 1)
    item, _ = q.get()
    q.done(item)
    clock.step(9)  # the replaced 10 s entry must not fire
    q.add_after("probe", 0.5)
    clock.step(0.5)
    wait_for(lambda: len(q) == 1)
    assert q.get()[0] == "probe"
    assert len(q) == 0


def test_re_add_with_later_time_is_ignored(q, clock):
    q.add_after("a", 1)
    q.add_after("a", 10)
    clock.step(1)
    wait_for(lambda: len(q) == 1)
    assert q.pending_count() == 0


def test_only_a_new_earliest_item_wakes_the_waiting_thread(q, clock):
    q.add_after("first", 2)
    assert clock.block_until_waiters(1)  # the thread waits for "first"
    assert not q._wakeup.is_set()
    q.add_after("later", 5)  # due after "first": the thread's wait already ends in time
    assert not q._wakeup.is_set()
    q.add_after("earlier", 1)  # a new head: the thread must wait less
    assert q._wakeup.is_set()
    clock.step(1)
    wait_for(lambda: len(q) == 1)
    clock.step(1)
    wait_for(lambda: len(q) == 2)
    clock.step(3)
    wait_for(lambda: len(q) == 3)
    assert [q.get()[0] for _ in range(3)] == ["earlier", "first", "later"]


def test_delayed_item_dedups_with_waiting_copy(q, clock):
    q.add("a")
    q.add_after("a", 1)
    clock.step(1)
    wait_for(lambda: q.pending_count() == 0)
    assert len(q) == 1


def test_add_after_shutdown_is_ignored_and_thread_exits(clock):
    q = DelayingQueue(clock=clock)
    q.add_after("a", 1)
    thread = q._thread
    q.shut_down()
    thread.join(5)
    assert not thread.is_alive()
    q.add_after("b", 1)
    assert q.pending_count() == 1  # only the entry from before shutdown
    assert q.get() == (None, True)


def test_real_clock_delay():
    q = DelayingQueue()
    start = time.monotonic()
    q.add_after("a", 0.05)
    assert q.get() == ("a", False)
    assert time.monotonic() - start >= 0.05
    q.shut_down()


def test_hammer_concurrent_delayed_adds_each_delivered_once(clock):
    import random
    from collections import Counter

    q = DelayingQueue(clock=clock)
    producers, per_producer = 6, 300
    seen = Counter()
    lock = threading.Lock()

    def produce(p):
        rnd = random.Random(p)
        for i in range(per_producer):
            q.add_after((p, i), rnd.uniform(0.0, 5.0))

    def consume():
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            with lock:
                seen[item] += 1
            q.done(item)

    workers = [threading.Thread(target=consume, daemon=True) for _ in range(3)]
    prods = [threading.Thread(target=produce, args=(p,), daemon=True) for p in range(producers)]
    for t in workers + prods:
        t.start()
    for t in prods:
        t.join(30)
    for _ in range(6):
        clock.step(1)
    total = producers * per_producer
    wait_for(lambda: sum(seen.values()) == total, timeout=20)
    q.shut_down()
    for t in workers:
        t.join(10)
    assert len(seen) == total and set(seen.values()) == {1}
