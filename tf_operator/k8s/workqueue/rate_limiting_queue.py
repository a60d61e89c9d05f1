"""A delaying queue whose re-adds are paced by a `RateLimiter`.

`add_rate_limited(item)` asks the limiter how long to wait and delays the item by that;
`forget(item)` tells the limiter the item succeeded, resetting its backoff. `forget`
does not remove the item from the queue: callers still call `done`.
"""

from __future__ import annotations

from typing import Any

from tf_operator.k8s.clock import Clock
from tf_operator.k8s.workqueue.delaying_queue import DelayingQueue
from tf_operator.k8s.workqueue.metrics import MetricsProvider
from tf_operator.k8s.workqueue.rate_limiters import RateLimiter


class RateLimitingQueue(DelayingQueue):
    def __init__(
        self,
        rate_limiter: RateLimiter,
        name: str = "",
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name, clock=clock, metrics_provider=metrics_provider)
        self.rate_limiter = rate_limiter

    def add_rate_limited(self, item: Any) -> None:
        """Add `item` after the delay the rate limiter assigns to it."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: Any) -> None:
        """Stop tracking `item`'s failures (call when it was processed successfully)."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: Any) -> int:
        return self.rate_limiter.num_requeues(item)


def new_rate_limiting_queue(
    rate_limiter: RateLimiter,
    name: str | None = None,
    clock: Clock | None = None,
    metrics_provider: MetricsProvider | None = None,
) -> RateLimitingQueue:
    return RateLimitingQueue(
        rate_limiter, name or "", clock=clock, metrics_provider=metrics_provider
    )
