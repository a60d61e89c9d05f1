"""A work queue that can add items after a delay.

Pending items sit in a min-heap ordered by the monotonic time at which they become
ready; one background thread (started on the first delayed add) moves due items into the
queue and otherwise waits, on the injected clock, until the earliest deadline, a delayed
add that becomes the earliest (a later one leaves it asleep: it wakes for the earlier one
first anyway), shutdown, or a heartbeat of `MAX_WAIT` seconds.

An item already waiting keeps a single pending entry: a later `add_after` with an
earlier ready time moves it forward; one with a later time is ignored. Replaced heap
entries are left in place and skipped when they surface (lazy deletion).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from typing import Any

from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.workqueue.metrics import MetricsProvider, new_retry_metrics
from tf_operator.k8s.workqueue.queue import Queue

log = logging.getLogger(__name__)

# Upper bound on one wait of the background thread, so it re-checks even if woken wrongly.
MAX_WAIT = 10.0


class DelayingQueue(Queue):
    """`Queue` plus `add_after(item, seconds)`."""

    def __init__(
        self,
        name: str = "",
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name, clock=clock, metrics_provider=metrics_provider)
        self._clock = clock or REAL_CLOCK
        self._retry_metrics = new_retry_metrics(name, metrics_provider)
        self._heap_lock = threading.Lock()
        self._heap: list[tuple[float, int, Any]] = []
        self._pending: dict[Any, tuple[float, int]] = {}
        self._seq = itertools.count()
        self._wakeup = threading.Event()
        self._thread: threading.Thread | None = None

    def add_after(self, item: Any, seconds: float) -> None:
        """Add `item` once `seconds` have passed (at once when not positive)."""
        if self.shutting_down():
            return
        if self._retry_metrics is not None:
            self._retry_metrics.retry()
        if seconds <= 0:
            self.add(item)
            return
        ready_at = self._clock.monotonic() + seconds
        with self._heap_lock:
            current = self._pending.get(item)
            if current is not None and current[0] <= ready_at:
                return
            seq = next(self._seq)
            self._pending[item] = (ready_at, seq)
            heapq.heappush(self._heap, (ready_at, seq, item))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._waiting_loop, name=f"workqueue-delay-{self.name}", daemon=True
                )
                self._thread.start()
            # The thread already waits until the head's time or earlier; only a new head
            # moves its deadline forward.
            wake = self._heap[0][1] == seq
        if wake:
            self._wakeup.set()

    def pending_count(self) -> int:
        """Number of items waiting for their delay to pass."""
        with self._heap_lock:
            return len(self._pending)

    def shut_down(self) -> None:
        super().shut_down()
        self._wakeup.set()

    def _pop_ready(self, now: float) -> tuple[list[Any], float]:
        """Take every due item off the heap; return them and the next deadline."""
        ready = []
        with self._heap_lock:
            heap = self._heap
            while heap and heap[0][0] <= now:
                _, seq, item = heapq.heappop(heap)
                current = self._pending.get(item)
                if current is not None and current[1] == seq:
                    del self._pending[item]
                    ready.append(item)
            deadline = now + MAX_WAIT
            if heap:
                deadline = min(deadline, heap[0][0])
        return ready, deadline

    def _waiting_loop(self) -> None:
        try:
            while True:
                # Clear before reading the heap: an add that lands after this wakes the
                # wait below immediately instead of being missed.
                self._wakeup.clear()
                if self.shutting_down():
                    return
                ready, deadline = self._pop_ready(self._clock.monotonic())
                for item in ready:
                    self.add(item)
                self._clock.wait_until(self._wakeup, deadline)
        except Exception:  # keep the reason visible; a dead thread would stall retries
            log.exception("workqueue %r: delaying thread crashed", self.name)
            raise
