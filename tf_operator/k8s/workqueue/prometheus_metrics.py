"""Prometheus implementation of the workqueue `MetricsProvider`.

Each metric is one family labelled by queue `name` (`workqueue_depth{name="tfjobs"}`),
created and registered at most once per registry per process: several queues, several
providers, or a module imported twice all share the same families. If a family of the
same name already sits in the registry (registered by someone else), it is reused rather
than failing with a duplicate-registration error.

Usage: `enable_prometheus_metrics()` (or `set_provider(PrometheusMetricsProvider())`)
before the queues are built.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from tf_operator.k8s.workqueue.metrics import (
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    MetricsProvider,
    set_provider,
)

# 1e-8 s .. 10 s, one bucket per decade, as newer client-go versions use.
DURATION_BUCKETS = tuple(10.0**exp for exp in range(-8, 2))

_families_lock = threading.Lock()
_families: weakref.WeakKeyDictionary[CollectorRegistry, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def _existing(registry: CollectorRegistry, name: str) -> Any:
    # prometheus_client has no public lookup by name; the mapping is stable across releases.
    return registry._names_to_collectors.get(name)  # noqa: SLF001


def _family(registry: CollectorRegistry, key: str, factory: Callable[[], Any]) -> Any:
    with _families_lock:
        per_registry = _families.setdefault(registry, {})
        if key in per_registry:
            return per_registry[key]
        try:
            metric = factory()
        except ValueError:  # duplicated timeseries: registered by another party
            metric = _existing(registry, key)
            if metric is None:
                raise
        per_registry[key] = metric
        return metric


class PrometheusMetricsProvider(MetricsProvider):
    """Exports `workqueue_*` metrics to a prometheus_client registry."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self._registry = registry

    def _get(self, key: str, factory: Callable[[], Any]) -> Any:
        return _family(self._registry, key, factory)

    def _depth(self) -> Gauge:
        family: Gauge = self._get(
            "workqueue_depth",
            lambda: Gauge(
                "workqueue_depth", "Current depth of workqueue", ["name"], registry=self._registry
            ),
        )
        return family

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return self._depth().labels(name=name)

    def new_adds_metric(self, name: str) -> CounterMetric:
        family = self._get(
            "workqueue_adds_total",
            lambda: Counter(
                "workqueue_adds",
                "Total number of adds handled by workqueue",
                ["name"],
                registry=self._registry,
            ),
        )
        metric = family.labels(name=name)
        return metric  # type: ignore[no-any-return]  # prometheus_client types labels() loosely

    def new_latency_metric(self, name: str) -> HistogramMetric:
        family = self._get(
            "workqueue_queue_duration_seconds",
            lambda: Histogram(
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                ["name"],
                buckets=DURATION_BUCKETS,
                registry=self._registry,
            ),
        )
        metric = family.labels(name=name)
        return metric  # type: ignore[no-any-return]  # prometheus_client types labels() loosely

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        family = self._get(
            "workqueue_work_duration_seconds",
            lambda: Histogram(
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes",
                ["name"],
                buckets=DURATION_BUCKETS,
                registry=self._registry,
            ),
        )
        metric = family.labels(name=name)
        return metric  # type: ignore[no-any-return]  # prometheus_client types labels() loosely

    def new_retries_metric(self, name: str) -> CounterMetric:
        family = self._get(
            "workqueue_retries_total",
            lambda: Counter(
                "workqueue_retries",
                "Total number of retries handled by workqueue",
                ["name"],
                registry=self._registry,
            ),
        )
        metric = family.labels(name=name)
        return metric  # type: ignore[no-any-return]  # prometheus_client types labels() loosely

    def register_unfinished_work(
        self,
        name: str,
        unfinished_seconds: Callable[[], float],
        longest_seconds: Callable[[], float],
    ) -> None:
        unfinished = self._get(
            "workqueue_unfinished_work_seconds",
            lambda: Gauge(
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and has not "
                "been observed by work_duration",
                ["name"],
                registry=self._registry,
            ),
        )
        longest = self._get(
            "workqueue_longest_running_processor_seconds",
            lambda: Gauge(
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running",
                ["name"],
                registry=self._registry,
            ),
        )
        # Computed at scrape time: costs nothing on the queue's hot path.
        unfinished.labels(name=name).set_function(unfinished_seconds)
        longest.labels(name=name).set_function(longest_seconds)


def enable_prometheus_metrics(registry: CollectorRegistry = REGISTRY) -> None:
    """Make every named queue built from now on export `workqueue_*` metrics.

    Calls `set_provider`, so only the first provider installed in a process counts.
    (tf-operator v0.5.3 never installed one: its workqueue metrics were no-ops.)
    """
    set_provider(PrometheusMetricsProvider(registry))
