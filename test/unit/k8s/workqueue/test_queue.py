"""Tests for the plain work queue: order, dedup, in-flight re-adds, shutdown, hammer."""

import threading
import time
from collections import Counter

from tf_operator.k8s.workqueue import Queue


def _start(fn, *args):
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


def test_fifo_order_and_len():
    q = Queue()
    for item in ("a", "b", "c"):
        q.add(item)
    assert len(q) == 3
    assert [q.get()[0] for _ in range(3)] == ["a", "b", "c"]
    assert len(q) == 0


def test_dedup_of_waiting_items():
    q = Queue()
    for item in ("a", "b", "a", "b", "a"):
        q.add(item)
    assert len(q) == 2
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)


def test_item_re_added_while_processing_is_processed_again_once_after_done():
    q = Queue()
    q.add("a")
    item, _ = q.get()
    for _ in range(5):
        q.add("a")
    assert len(q) == 0, "must not be handed out while a worker holds it"
    q.done("a")
    assert len(q) == 1
    assert q.get() == ("a", False)
    q.done("a")
    assert len(q) == 0
    q.shut_down()
    assert q.get() == (None, True)


def test_done_without_re_add_does_not_requeue():
    q = Queue()
    q.add("a")
    q.get()
    q.done("a")
    assert len(q) == 0


def test_shutdown_wakes_all_blocked_getters():
    q = Queue()
    results = []
    lock = threading.Lock()

    def getter():
        r = q.get()
        with lock:
            results.append(r)

    threads = [_start(getter) for _ in range(5)]
    q.shut_down()
    for t in threads:
        t.join(5)
        assert not t.is_alive()
    assert results == [(None, True)] * 5
    assert q.shutting_down()


def test_shutdown_drains_waiting_items_then_reports_shutdown():
    q = Queue()
    q.add("a")
    q.add("b")
    q.shut_down()
    q.add("c")  # ignored after shutdown
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)
    assert q.get() == (None, True)
    assert q.get() == (None, True)


def test_blocked_getter_receives_item_added_later():
    q = Queue()
    got = []
    t = _start(lambda: got.append(q.get()))
    q.add("x")
    t.join(5)
    assert got == [("x", False)]


def test_many_producers_and_consumers_process_every_distinct_item_once():
    q = Queue()
    producers, per_producer, consumers = 6, 2000, 4
    seen = Counter()
    lock = threading.Lock()

    def produce(p):
        for i in range(per_producer):
            q.add((p, i))

    def consume():
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            with lock:
                seen[item] += 1
            q.done(item)

    workers = [_start(consume) for _ in range(consumers)]
    prods = [_start(produce, p) for p in range(producers)]
    for t in prods:
        t.join(30)
    q.shut_down()
    for t in workers:
        t.join(30)
        assert not t.is_alive()
    assert len(seen) == producers * per_producer
    assert set(seen.values()) == {1}


def test_hammer_same_keys_never_processed_concurrently_and_last_add_is_processed():
    """Many threads add a few keys; workers assert no key is held twice at once.

    After producers finish, every key must be processed at least once after its last add
    (no lost wake-ups), and nothing is handed out after the final drain.
    """
    q = Queue()
    keys = [f"ns/job-{i}" for i in range(8)]
    in_flight = set()
    last_add = {}
    last_start = {}
    tick = [0]
    lock = threading.Lock()
    violations = []

    def produce(seed):
        for i in range(3000):
            key = keys[(seed * 7 + i) % len(keys)]
            with lock:
                tick[0] += 1
                last_add[key] = tick[0]
            q.add(key)

    def consume():
        while True:
            key, shutdown = q.get()
            if shutdown:
                return
            with lock:
                if key in in_flight:
                    violations.append(key)
                in_flight.add(key)
                tick[0] += 1
                last_start[key] = tick[0]
            time.sleep(0)  # yield the GIL while "processing": widens the window for overlap
            with lock:
                in_flight.discard(key)
            q.done(key)

    workers = [_start(consume) for _ in range(6)]
    prods = [_start(produce, s) for s in range(6)]
    for t in prods:
        t.join(60)
    # Wait (with a deadline) until every key has been started after its last add.
    deadline = threading.Event()
    for _ in range(2000):
        with lock:
            if all(last_start.get(k, 0) > last_add[k] for k in keys):
                break
        deadline.wait(0.005)
    q.shut_down()
    for t in workers:
        t.join(30)
        assert not t.is_alive()
    assert violations == []
    assert all(last_start[k] > last_add[k] for k in keys)
    assert len(q) == 0
