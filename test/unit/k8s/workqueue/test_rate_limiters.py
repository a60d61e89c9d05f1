"""Rate limiter timing, with a fake clock for the token bucket."""

import pytest

from support.fake_clock import FakeClock
from tf_operator.k8s.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)


def test_exponential_sequence_per_item_and_forget():
    rl = ItemExponentialFailureRateLimiter(0.005, 1000)
    assert [rl.when("a") for _ in range(5)] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08])
    assert rl.num_requeues("a") == 5
    assert rl.when("b") == pytest.approx(0.005)  # items are independent
    rl.forget("a")
    assert rl.num_requeues("a") == 0
    assert rl.when("a") == pytest.approx(0.005)


def test_exponential_caps_at_max_delay_and_survives_huge_counts():
    rl = ItemExponentialFailureRateLimiter(0.001, 1.0)
    delays = [rl.when("x") for _ in range(15)]
    assert delays[9] == pytest.approx(0.512)
    assert delays[10:] == [1.0] * 5
    for _ in range(2000):
        rl.when("x")
    assert rl.when("x") == 1.0


def test_default_exponential_reaches_1000s_cap():
    rl = ItemExponentialFailureRateLimiter()
    delays = [rl.when("x") for _ in range(30)]
    assert delays[0] == pytest.approx(0.005)
    assert max(delays) == 1000.0
    assert delays[-1] == 1000.0


def test_fast_slow():
    rl = ItemFastSlowRateLimiter(0.005, 10.0, 3)
    assert [rl.when("a") for _ in range(5)] == [0.005, 0.005, 0.005, 10.0, 10.0]
    assert rl.num_requeues("a") == 5
    rl.forget("a")
    assert rl.when("a") == 0.005


def test_bucket_burst_then_spacing_on_fake_clock():
    clock = FakeClock()
    rl = BucketRateLimiter(qps=10, burst=100, clock=clock)
    assert [rl.when(i) for i in range(100)] == [0.0] * 100
    assert [rl.when(i) for i in range(3)] == pytest.approx([0.1, 0.2, 0.3])
    # 0.4 s later the three reserved tokens are paid back and one more is available.
    clock.step(0.4)
    assert rl.when("x") == pytest.approx(0.0, abs=1e-9)
    assert rl.when("y") == pytest.approx(0.1)
    assert rl.num_requeues("x") == 0
    rl.forget("x")  # no-op


def test_bucket_refills_up_to_burst_only():
    clock = FakeClock()
    rl = BucketRateLimiter(qps=10, burst=5, clock=clock)
    clock.step(1000)
    assert [rl.when(i) for i in range(6)] == pytest.approx([0, 0, 0, 0, 0, 0.1])


def test_max_of_takes_longest_and_feeds_every_limiter():
    fast = ItemFastSlowRateLimiter(0.001, 0.002, 1)
    expo = ItemExponentialFailureRateLimiter(0.005, 1000)
    rl = MaxOfRateLimiter(fast, expo)
    assert [rl.when("a") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    assert fast.num_requeues("a") == 3 and expo.num_requeues("a") == 3
    assert rl.num_requeues("a") == 3
    rl.forget("a")
    assert fast.num_requeues("a") == 0 and expo.num_requeues("a") == 0


def test_default_controller_rate_limiter_combines_backoff_and_bucket():
    clock = FakeClock()
    rl = default_controller_rate_limiter(clock)
    assert [rl.when("a") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    # exhaust the bucket with other items: the overall limit then dominates
    for i in range(97):
        rl.when(("other", i))
    assert rl.when("b") == pytest.approx(0.1)
    assert rl.num_requeues("a") == 3
