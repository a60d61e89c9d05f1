"""Time behind a small interface so timing logic can be tested without sleeping.

``RealClock`` reads ``time.monotonic`` and waits on the stop event.
``FakeClock`` only moves when a test calls :meth:`FakeClock.step`; anything
waiting on it wakes once its deadline has passed (or its stop event is set).
"""

from __future__ import annotations

import threading
import time


class Clock:
    def now(self) -> float:
        raise NotImplementedError

    def wait(self, stop_event: threading.Event, seconds: float) -> bool:
        """Wait ``seconds`` or until ``stop_event``; True when stopped."""
        raise NotImplementedError


class RealClock(Clock):
    def now(self) -> float:
        return time.monotonic()

    def wait(self, stop_event: threading.Event, seconds: float) -> bool:
        return stop_event.wait(max(0.0, seconds))


class FakeClock(Clock):
    """A clock that advances only when told; waiters poll the stop event briefly."""

    _POLL = 0.05  # how often a waiter re-checks its stop event

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._cond = threading.Condition()
        self._deadlines: list[float] = []

    def now(self) -> float:
        with self._cond:
            return self._now

    def step(self, seconds: float) -> None:
        with self._cond:
            self._now += seconds
            self._cond.notify_all()

    def waiters(self) -> int:
        """How many threads wait in :meth:`wait` for a moment still in the future."""
        with self._cond:
            return sum(1 for d in self._deadlines if d > self._now)

    def wait_for_waiters(self, n: int, timeout: float = 5.0) -> bool:
        """Block until ``n`` threads wait for a future moment (so a ``step`` will reach them)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while sum(1 for d in self._deadlines if d > self._now) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, self._POLL))
            return True

    def wait(self, stop_event: threading.Event, seconds: float) -> bool:
        with self._cond:
            deadline = self._now + seconds
            self._deadlines.append(deadline)
            self._cond.notify_all()
            try:
                while self._now < deadline:
                    if stop_event.is_set():
                        return True
                    self._cond.wait(self._POLL)
            finally:
                self._deadlines.remove(deadline)
                self._cond.notify_all()
        return stop_event.is_set()
