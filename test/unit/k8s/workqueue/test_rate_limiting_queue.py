"""Tests for the rate-limiting queue."""

import threading
import time

from tf_operator.k8s.clock import FakeClock
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
