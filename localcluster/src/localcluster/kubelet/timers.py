"""One timer heap per kubelet, so thousands of simulated pods cost no threads.

``TimerQueue`` orders callbacks by deadline on an injectable ``Clock``. In
production a single daemon thread sleeps until the earliest deadline; in unit
tests a ``ManualClock`` is advanced by hand and ``run_due`` fires what is due in
the calling thread, so tests never sleep. Callbacks run without the queue's
lock held and may schedule or cancel other timers.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)


class Clock:
    """Monotonic seconds for deadlines and wall-clock seconds for timestamps."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()


class ManualClock(Clock):
    """A clock that only moves when told to (tests)."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start

    def monotonic(self) -> float:
        return self._now

    def wall(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds


class TimerHandle:
    __slots__ = ("cancelled", "callback", "deadline")

    def __init__(self, deadline: float, callback: Callable[[], None]) -> None:
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class TimerQueue:
    """A heap of deadlines served by at most one thread."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or Clock()
        self._heap: list[tuple[float, int, TimerHandle]] = []
        self._counter = itertools.count()
        self._cond = threading.Condition()

    def __len__(self) -> int:
        with self._cond:
            return sum(1 for _, _, h in self._heap if not h.cancelled)

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        handle = TimerHandle(self.clock.monotonic() + max(0.0, delay), callback)
        with self._cond:
            heapq.heappush(self._heap, (handle.deadline, next(self._counter), handle))
            self._cond.notify()
        return handle

    def run_due(self) -> float | None:
        """Fire every timer whose deadline has passed; return the next deadline or None."""
        while True:
            with self._cond:
                while self._heap and self._heap[0][2].cancelled:
                    heapq.heappop(self._heap)
                if not self._heap:
                    return None
                deadline, _, handle = self._heap[0]
                if deadline > self.clock.monotonic():
                    return deadline
                heapq.heappop(self._heap)
            try:
                handle.callback()
            except Exception:  # noqa: BLE001 - one bad timer must not stop the others
                logger.exception("timer callback failed")

    def run(self, stop_event: threading.Event) -> None:
        """Serve timers until ``stop_event`` is set (real clock only)."""
        while not stop_event.is_set():
            next_deadline = self.run_due()
            with self._cond:
                if stop_event.is_set():
                    return
                if self._heap and self._heap[0][0] < (next_deadline or float("inf")):
                    continue  # something earlier was added while we ran callbacks
                timeout = 0.5 if next_deadline is None else next_deadline - self.clock.monotonic()
                if timeout > 0:
                    self._cond.wait(min(timeout, 0.5))

    def start(self, stop_event: threading.Event, name: str = "timers") -> threading.Thread:
        thread = threading.Thread(target=self.run, args=(stop_event,), name=name, daemon=True)
        thread.start()
        return thread

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()
