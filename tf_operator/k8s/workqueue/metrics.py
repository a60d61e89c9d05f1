"""Workqueue metrics behind a small provider interface.

A queue with a name asks the process-wide `MetricsProvider` (set once with
`set_provider`; a no-op provider by default) for its metrics: depth, adds, time spent
waiting in the queue, time spent processing, retries, and two gauges read on demand
(unfinished work seconds, longest running processor). A queue without a name, or a queue
built while the provider is the no-op one, gets no metrics object at all, so its hot path
pays a single `is None` test.

The `QueueMetrics` methods are called with the queue's lock held; they only touch plain
dicts and the provider's metric objects.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from tf_operator.k8s.clock import REAL_CLOCK, Clock


class GaugeMetric(Protocol):
    def inc(self) -> None: ...
    def dec(self) -> None: ...


class CounterMetric(Protocol):
    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    def observe(self, value: float) -> None: ...


class MetricsProvider:
    """Creates the metrics of one named queue. Subclass and override what you export.

    The base class is the no-op provider. Durations are observed in seconds.
    """

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return NOOP_METRIC

    def new_adds_metric(self, name: str) -> CounterMetric:
        return NOOP_METRIC

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return NOOP_METRIC

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return NOOP_METRIC

    def new_retries_metric(self, name: str) -> CounterMetric:
        return NOOP_METRIC

    def register_unfinished_work(
        self,
        name: str,
        unfinished_seconds: Callable[[], float],
        longest_seconds: Callable[[], float],
    ) -> None:
        """Wire two gauges that are computed from the callbacks when read."""

    def is_noop(self) -> bool:
        """True only for the do-nothing provider; queues then skip metrics entirely."""
        return type(self) is MetricsProvider


class _NoopMetric:
    def inc(self) -> None:
        pass

    def dec(self) -> None:
        pass

    def observe(self, value: float) -> None:
        pass


NOOP_METRIC = _NoopMetric()
NOOP_PROVIDER = MetricsProvider()

_provider_lock = threading.Lock()
_provider: MetricsProvider = NOOP_PROVIDER
_provider_set = False


def set_provider(provider: MetricsProvider) -> None:
    """Install the process-wide provider. Only the first call has effect (like sync.Once)."""
    global _provider, _provider_set
    with _provider_lock:
        if not _provider_set:
            _provider = provider
            _provider_set = True


def get_provider() -> MetricsProvider:
    return _provider


class QueueMetrics:
    """Metrics of one named queue; every method runs under the queue's lock."""

    def __init__(self, name: str, provider: MetricsProvider, clock: Clock) -> None:
        self._clock = clock
        self.depth = provider.new_depth_metric(name)
        self.adds = provider.new_adds_metric(name)
        self.latency = provider.new_latency_metric(name)
        self.work_duration = provider.new_work_duration_metric(name)
        self._add_times: dict[Any, float] = {}
        self._processing_start: dict[Any, float] = {}
        provider.register_unfinished_work(
            name, self.unfinished_work_seconds, self.longest_running_processor_seconds
        )

    def add(self, item: Any) -> None:
        self.adds.inc()
        self.depth.inc()
        self._add_times.setdefault(item, self._clock.monotonic())

    def get(self, item: Any) -> None:
        now = self._clock.monotonic()
        self.depth.dec()
        self._processing_start[item] = now
        added = self._add_times.pop(item, None)
        if added is not None:
            self.latency.observe(now - added)

    def done(self, item: Any) -> None:
        started = self._processing_start.pop(item, None)
        if started is not None:
            self.work_duration.observe(self._clock.monotonic() - started)

    def _starts(self) -> tuple[float, ...]:
        # Called from a scrape thread without the queue lock: copying the values in one
        # C-level call cannot race with a resize of the dict.
        return tuple(self._processing_start.values())

    def unfinished_work_seconds(self) -> float:
        """Total seconds that the items being processed now have been in progress."""
        now = self._clock.monotonic()
        return sum(now - s for s in self._starts())

    def longest_running_processor_seconds(self) -> float:
        """Seconds the longest-running item in progress has been processed."""
        starts = self._starts()
        return self._clock.monotonic() - min(starts) if starts else 0.0


class RetryMetrics:
    def __init__(self, name: str, provider: MetricsProvider) -> None:
        self.retries = provider.new_retries_metric(name)

    def retry(self) -> None:
        self.retries.inc()


def new_queue_metrics(
    name: str, provider: MetricsProvider | None, clock: Clock | None
) -> QueueMetrics | None:
    """Metrics for a queue, or None when the queue has no name or metrics are off."""
    provider = provider or get_provider()
    if not name or provider.is_noop():
        return None
    return QueueMetrics(name, provider, clock or REAL_CLOCK)


def new_retry_metrics(name: str, provider: MetricsProvider | None) -> RetryMetrics | None:
    provider = provider or get_provider()
    if not name or provider.is_noop():
        return None
    return RetryMetrics(name, provider)
