"""Rate limiters: how long to wait before an item may be retried.

All share one three-method interface (`RateLimiter`): `when(item)` records a failure and
returns the delay in seconds before the next attempt, `forget(item)` clears the item's
history once it succeeded (or was given up on), and `num_requeues(item)` says how many
failures were recorded. `MaxOfRateLimiter` composes them; the controller default combines
per-item exponential backoff with an overall token bucket.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Protocol

from tf_operator.k8s.clock import Clock
from tf_operator.k8s.workqueue.token_bucket import TokenBucket


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float: ...
    def forget(self, item: Hashable) -> None: ...
    def num_requeues(self, item: Hashable) -> int: ...


class _FailureCounter:
    """Per-item failure counts, shared by the per-item limiters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[Hashable, int] = {}

    def bump(self, item: Hashable) -> int:
        """Record one failure; return the count before it."""
        with self._lock:
            previous = self._failures.get(item, 0)
            self._failures[item] = previous + 1
            return previous

    def forget(self, item: Hashable) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def count(self, item: Hashable) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class ItemExponentialFailureRateLimiter:
    """`base_delay * 2**failures`, capped at `max_delay` (5 ms, 10 ms, 20 ms, ...)."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures = _FailureCounter()

    def when(self, item: Hashable) -> float:
        exponent = self._failures.bump(item)
        if exponent >= 1024:  # 2.0**1024 overflows a float; long past any cap anyway
            return self.max_delay
        return min(self.base_delay * 2.0**exponent, self.max_delay)

    def forget(self, item: Hashable) -> None:
        self._failures.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.count(item)


class ItemFastSlowRateLimiter:
    """`fast_delay` for the first `max_fast_attempts` failures of an item, then `slow_delay`."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        self._failures = _FailureCounter()

    def when(self, item: Hashable) -> float:
        failures = self._failures.bump(item) + 1
        return self.fast_delay if failures <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: Hashable) -> None:
        self._failures.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.count(item)


class BucketRateLimiter:
    """An overall token bucket (`qps` refill, `burst` size), blind to which item asks."""

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        self._bucket = TokenBucket(qps, burst, clock)

    def when(self, item: Hashable) -> float:
        return self._bucket.reserve()

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters; every limiter records every failure."""

    def __init__(self, *limiters: RateLimiter) -> None:
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        # Ask every limiter (not max() over a generator that could stop early):
        # each one must see the failure.
        delays = [limiter.when(item) for limiter in self.limiters]
        return max(delays, default=0.0)

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max((limiter.num_requeues(item) for limiter in self.limiters), default=0)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter:
    """Per-item backoff 5 ms doubling to 1000 s, and 10 qps / burst 100 overall."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(qps=10.0, burst=100, clock=clock),
    )


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter:
    """Per-item backoff only: 1 ms doubling to 1000 s."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)
