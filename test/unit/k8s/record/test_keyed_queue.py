"""KeyedQueue: bounded, FIFO across free keys, one item per key handed out at a time."""

import threading

from tf_operator.k8s.record.keyed_queue import KeyedQueue


def test_single_consumer_sees_plain_fifo():
    q = KeyedQueue(10)
    for key, item in [("a", 1), ("a", 2), ("b", 3), ("c", 4), ("a", 5)]:
        assert q.offer(key, item)
    seen = []
    for _ in range(5):
        key, item = q.take()
        seen.append(item)
        q.done(key)
    assert seen == [1, 2, 3, 4, 5]
    assert len(q) == 0


def test_busy_key_holds_back_only_its_own_items():
    q = KeyedQueue(10)
    q.offer("a", 1)
    q.offer("a", 2)
    q.offer("b", 3)
    assert q.take() == ("a", 1)
    assert q.take() == ("b", 3)  # "a" is busy: its second item waits, "b" goes ahead
    q.done("b")
    q.offer("b", 4)
    assert q.take() == ("b", 4)
    q.done("a")
    assert q.take() == ("a", 2)


def test_bound_counts_waiting_items_and_rejects_without_blocking():
    q = KeyedQueue(2)
    assert q.offer("a", 1) and q.offer("b", 2)
    assert not q.offer("c", 3)
    q.take()  # taken items no longer count
    assert q.offer("c", 3)
    assert len(q) == 2


def test_close_lets_consumers_drain_then_end():
    q = KeyedQueue(10)
    q.offer("a", 1)
    q.offer("a", 2)
    q.close()
    assert not q.offer("b", 3)
    key, first = q.take()
    result = {}
    waiter = threading.Thread(target=lambda: result.setdefault("next", q.take()))
    waiter.start()  # blocks: the only item left belongs to the busy key "a"
    q.done(key)
    waiter.join(5)
    assert (first, result["next"]) == (1, ("a", 2))
    q.done("a")
    assert q.take() is None


def test_waiting_consumers_end_when_last_busy_key_is_released():
    q = KeyedQueue(10)
    q.offer("a", 1)
    q.take()
    q.close()
    ended = []
    waiters = [threading.Thread(target=lambda: ended.append(q.take())) for _ in range(3)]
    for w in waiters:
        w.start()
    q.done("a")
    for w in waiters:
        w.join(5)
    assert ended == [None, None, None]


def test_take_releases_the_finished_key_and_takes_the_oldest_ready_item():
    q = KeyedQueue()
    for key, item in (("a", 1), ("b", 2), ("a", 3), ("c", 4)):
        q.offer(key, item)
    assert q.take() == ("a", 1)
    assert q.take() == ("b", 2)
    assert q.take("a") == ("a", 3)  # "a" released: its item 3 was offered before "c"'s
    assert q.take("b") == ("c", 4)
    q.close()
    assert q.take("a") is None and q.take("c") is None


def test_a_key_named_none_is_released_by_take():
    q = KeyedQueue()
    q.offer(None, 1)
    q.offer(None, 2)
    assert q.take() == (None, 1)
    assert q.take(None) == (None, 2)
