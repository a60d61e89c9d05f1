"""Tests for the rate-limiting queue."""

import threading
import time

from support.fake_clock import FakeClock
from tf_operator.k8s.workqueue import (
    ItemExponentialFailureRateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
    new_rate_limiting_queue,
)


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        pause.wait(0.002)


def test_add_rate_limited_backs_off_exponentially_and_forget_resets():
    clock = FakeClock()
    q = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.005, 1000), clock=clock)
    q.add_rate_limited("a")
    assert q.num_requeues("a") == 1
    clock.step(0.004)
    assert len(q) == 0
    clock.step(0.001)
    wait_for(lambda: len(q) == 1)
    item, _ = q.get()
    q.add_rate_limited(item)  # second failure: 10 ms
    q.done(item)
    clock.step(0.009)
    assert len(q) == 0
    clock.step(0.001)
    wait_for(lambda: len(q) == 1)
    assert q.num_requeues("a") == 2
    q.forget("a")
    assert q.num_requeues("a") == 0
    q.shut_down()


def test_new_rate_limiting_queue_with_default_limiter():
    clock = FakeClock()
    q = new_rate_limiting_queue(default_controller_rate_limiter(clock), "tfjobs", clock)
    assert isinstance(q, RateLimitingQueue)
    assert q.name == "tfjobs"
    q.add_rate_limited("ns/a")
    clock.step(0.005)
    wait_for(lambda: len(q) == 1)
    assert q.get() == ("ns/a", False)
    q.shut_down()


def test_workers_retry_failures_with_backoff_until_success():
    """A controller-style loop: each key fails twice, then succeeds and is forgotten."""
    clock = FakeClock()
    q = new_rate_limiting_queue(ItemExponentialFailureRateLimiter(0.005, 1.0), "w", clock)
    attempts: dict[str, int] = {}
    lock = threading.Lock()

    def worker():
        while True:
            key, shutdown = q.get()
            if shutdown:
                return
            with lock:
                attempts[key] = attempts.get(key, 0) + 1
                failed = attempts[key] <= 2
            if failed:
                q.add_rate_limited(key)
            else:
                q.forget(key)
            q.done(key)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    keys = [f"ns/job-{i}" for i in range(50)]
    for key in keys:
        q.add(key)
    deadline = time.monotonic() + 10
    while any(attempts.get(k, 0) < 3 for k in keys):
        assert time.monotonic() < deadline, attempts
        clock.step(0.005)
        pause = threading.Event()
        pause.wait(0.001)
    q.shut_down()
    for t in threads:
        t.join(5)
    assert all(attempts[k] == 3 for k in keys)
    assert all(q.num_requeues(k) == 0 for k in keys)
