"""Prometheus counters served under their exact legacy names.

The Go client of v0.5.3's era exposed counters without a ``_total`` suffix; Python's
``prometheus_client`` always adds one (and a ``_created`` sample) to counters. To keep the
legacy sample names (``tf_operator_jobs_created 3``) that dashboards query, a
:class:`LegacyCounter` is served by a :class:`LegacyCollector` as an ``untyped`` metric.
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


class LegacyCollector:
    """Yields each counter as an untyped metric whose single sample has the exact name."""

    def __init__(self, counters: tuple[LegacyCounter, ...]) -> None:
        self._counters = counters

    def collect(self) -> Iterator[Metric]:
        for counter in self._counters:
            metric = Metric(counter.name, counter.documentation, "untyped")
            metric.add_sample(counter.name, {}, counter.get())
            yield metric


_registered: set[str] = set()
_register_lock = threading.Lock()


def register(counters: tuple[LegacyCounter, ...], registry: CollectorRegistry = REGISTRY) -> None:
    """Register a collector of ``counters`` in ``registry`` once (idempotent per name set)."""
    key = ",".join(sorted(c.name for c in counters))
    with _register_lock:
        if key not in _registered:
            registry.register(LegacyCollector(counters))
            _registered.add(key)
