"""Work queues for controllers (the counterpart of client-go `util/workqueue`).

Three layers, each a small subclass of the one below:
`Queue` -> `DelayingQueue` (`add_after`) -> `RateLimitingQueue` (`add_rate_limited`,
`forget`, `num_requeues`).

Guarantees of every queue:
- Fair: items are handed out in the order they were added.
- Stingy: an item added several times before it is picked up is processed once; an item
  is never handed to two workers at once; an item re-added while being processed is
  processed again, once, after its `done`.
- Many producers and many consumers may use one queue from any threads.
- Shutdown: `shut_down` stops accepting adds and wakes every blocked `get`; the items
  still waiting are handed out, then `get` returns `(None, True)`.

Items must be hashable (controllers use "namespace/name" keys). Time comes from an
injectable `Clock`; metrics from the provider set with `set_provider` (no-op by default).
"""

from tf_operator.k8s.workqueue.delaying_queue import DelayingQueue
from tf_operator.k8s.workqueue.metrics import MetricsProvider, get_provider, set_provider
from tf_operator.k8s.workqueue.parallelizer import parallelize
from tf_operator.k8s.workqueue.queue import Queue
from tf_operator.k8s.workqueue.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)
from tf_operator.k8s.workqueue.rate_limiting_queue import (
    RateLimitingQueue,
    new_rate_limiting_queue,
)

__all__ = [
    "BucketRateLimiter",
    "DelayingQueue",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "get_provider",
    "new_rate_limiting_queue",
    "parallelize",
    "set_provider",
]
