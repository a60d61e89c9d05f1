"""Prometheus counters served under their exact names, v0.5.3's and training-operator v1.9's.

The Go client of v0.5.3's era exposed counters without a ``_total`` suffix; Python's
``prometheus_client`` always adds one (and a ``_created`` sample) to counters. To keep the
legacy sample names (``tf_operator_jobs_created 3``) that dashboards query, a
:class:`LegacyCounter` is served by a :class:`LegacyCollector` as an ``untyped`` metric.
training-operator v1.9's job counters are labelled counters with the ``_total`` suffix and no
``_created`` sample (``training_operator_jobs_created_total{framework="pytorch"} 3``): a
:class:`LabelledCounter` serves one such family, :meth:`LabelledCounter.labels` a child that
counts one label value. :class:`Counters` increments several at once (a TFJob is counted under
both names).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.core import CounterMetricFamily, Metric


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


class LabelledCounter:
    """A family of counters by the values of one label, served as ``<name>_total``."""

    def __init__(self, name: str, documentation: str, label: str) -> None:
        self.name = name
        self.documentation = documentation
        self.label = label
        self._children: dict[str, LegacyCounter] = {}
        self._lock = threading.Lock()

    def labels(self, value: str) -> LegacyCounter:
        """The counter of one label value (created at zero, so it is served before it counts)."""
        with self._lock:
            child = self._children.get(value)
            if child is None:
                child = self._children[value] = LegacyCounter(self.name, self.documentation)
            return child

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=[self.label])
        with self._lock:
            children = sorted(self._children.items())
        for value, child in children:
            family.add_metric([value], child.get())
        yield family


class Counters:
    """Several counters incremented as one."""

    def __init__(self, *counters: LegacyCounter) -> None:
        self._counters = counters

    def inc(self, amount: float = 1.0) -> None:
        for counter in self._counters:
            counter.inc(amount)


def register_families(
    families: tuple[LabelledCounter, ...], registry: CollectorRegistry = REGISTRY
) -> None:
    """Register each family in ``registry`` once (idempotent per name)."""
    with _register_lock:
        for family in families:
            key = f"family:{family.name}"
            if key not in _registered:
                registry.register(family)
                _registered.add(key)
