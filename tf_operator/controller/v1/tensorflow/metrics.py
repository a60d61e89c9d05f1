"""Prometheus metrics of the TFJob controller, under v0.5.3's exact names.

The Go client of v0.5.3's era exposed counters without a ``_total`` suffix; Python's
``prometheus_client`` always adds one to counters. To keep the legacy sample
names (``tf_operator_jobs_created 3``) that dashboards query, the counters are served by a
small custom collector as ``untyped`` metrics. ``tf_operator_is_leader`` is a gauge owned by
the app (``tf_operator.app.server``), which sets it on leadership changes.

Counting follows transitions, not evaluations (divergence D23): a job counts as created when the
controller first records its ``Created`` condition, as successful/failed when its Succeeded /
Failed condition is first set (limit failures included), as restarted each time the controller
restarts pods of it, and as deleted once when a job it had seen disappears.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.core import Metric


class LegacyCounter:
    """A monotonically increasing, thread-safe value exposed under its exact name."""

    def __init__(self, name: str, documentation: str) -> None:
        self.name = name
        self.documentation = documentation
        self._value = 0.0
        self._lock = threading.Lock()

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("counters can only increase")
        with self._lock:
            self._value += amount

    def get(self) -> float:
        with self._lock:
            return self._value


JOBS_CREATED = LegacyCounter("tf_operator_jobs_created", "Counts number of TF jobs created")
JOBS_DELETED = LegacyCounter("tf_operator_jobs_deleted", "Counts number of TF jobs deleted")
JOBS_SUCCESSFUL = LegacyCounter(
    "tf_operator_jobs_successful", "Counts number of TF jobs successful"
)
JOBS_FAILED = LegacyCounter("tf_operator_jobs_failed", "Counts number of TF jobs failed")
JOBS_RESTARTED = LegacyCounter("tf_operator_jobs_restarted", "Counts number of TF jobs restarted")

ALL_COUNTERS = (JOBS_CREATED, JOBS_DELETED, JOBS_SUCCESSFUL, JOBS_FAILED, JOBS_RESTARTED)

# Name and help text of the leader gauge (defined and set by the app).
IS_LEADER_NAME = "tf_operator_is_leader"
IS_LEADER_HELP = "Is this client the leader of this tf-operator client set?"


class LegacyCollector:
    """Yields each counter as an untyped metric whose single sample has the exact name."""

    def __init__(self, counters: tuple[LegacyCounter, ...] = ALL_COUNTERS) -> None:
        self._counters = counters

    def collect(self) -> Iterator[Metric]:
        for counter in self._counters:
            metric = Metric(counter.name, counter.documentation, "untyped")
            metric.add_sample(counter.name, {}, counter.get())
            yield metric


_registered = False
_register_lock = threading.Lock()


def register(registry: CollectorRegistry = REGISTRY) -> None:
    """Register the collector once in the default registry (idempotent)."""
    global _registered
    with _register_lock:
        if not _registered:
            registry.register(LegacyCollector())
            _registered = True


register()
