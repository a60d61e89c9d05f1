"""A clock whose time moves only when the test says so (for unit tests).

`FakeClock` replaces both readings of ``tf_operator.k8s.clock.Clock`` with a virtual time that
only moves when a test calls `step` (or `set_monotonic`). Threads blocked in `wait`/`sleep` on a
fake clock wake when virtual time passes their deadline, or when the event they wait on is set.
Tests use `block_until_waiters(n)` to make sure the code under test has reached its wait before
stepping time, and again after stepping to let it react, which keeps them deterministic.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from tf_operator.k8s.clock import Clock

# `threading.Event` offers no hook to be told when it is set, so a fake-clock waiter polls
# its event: first after 1 ms, backing off to every 50 ms (real time), which keeps idle
# waiters (e.g. a delaying queue nobody shut down) cheap. `step` wakes every waiter at once.
_EVENT_POLL_FIRST = 0.001
_EVENT_POLL_MAX = 0.05
_EVENT_POLL_SECONDS = 0.005  # block_until_waiters re-check period


class FakeClock(Clock):
    """A clock whose time moves only when the test says so.

    Thread-safe: any thread may step time; every waiter whose deadline has passed wakes.
    """

    def __init__(self, start: datetime | None = None, monotonic_start: float = 1000.0) -> None:
        self._cond = threading.Condition()
        self._wall_origin = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono_origin = monotonic_start
        self._elapsed = 0.0
        self._waiters: dict[object, float | None] = {}  # token -> deadline

    def now(self) -> datetime:
        with self._cond:
            return self._wall_origin + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        with self._cond:
            return self._mono_origin + self._elapsed

    def step(self, seconds: float) -> None:
        """Advance virtual time by `seconds` and wake every waiter that is now due."""
        if seconds < 0:
            raise ValueError("a fake clock cannot go backwards")
        with self._cond:
            self._elapsed += seconds
            self._cond.notify_all()

    def set_monotonic(self, value: float) -> None:
        """Move virtual time forward so that `monotonic()` returns `value`."""
        with self._cond:
            self.step(value - (self._mono_origin + self._elapsed))

    def sleep(self, seconds: float) -> None:
        self.wait(threading.Event(), seconds)

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        with self._cond:
            deadline = None if timeout is None else self._mono_origin + self._elapsed + timeout
            return self._wait(event, deadline)

    def wait_until(self, event: threading.Event, deadline: float) -> bool:
        with self._cond:
            return self._wait(event, deadline)

    def _wait(self, event: threading.Event, deadline: float | None) -> bool:
        with self._cond:
            token = object()
            self._waiters[token] = deadline
            self._cond.notify_all()  # lets block_until_waiters see us
            poll = _EVENT_POLL_FIRST
            try:
                while not event.is_set():
                    if deadline is not None and self._mono_origin + self._elapsed >= deadline:
                        return False
                    self._cond.wait(poll)
                    poll = min(poll * 2, _EVENT_POLL_MAX)
                return True
            finally:
                del self._waiters[token]
                self._cond.notify_all()

    def _blocked(self) -> int:
        # Waiters whose deadline has passed are about to wake and do not count.
        now = self._mono_origin + self._elapsed
        return sum(1 for d in self._waiters.values() if d is None or d > now)

    def has_waiters(self) -> bool:
        """True when a thread is blocked in `wait`/`sleep` with a deadline still ahead."""
        with self._cond:
            return self._blocked() > 0

    def waiters(self) -> int:
        """How many threads are blocked in `wait`/`sleep` with a deadline still ahead."""
        with self._cond:
            return self._blocked()

    def block_until_waiters(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Block (in real time) until at least `count` threads wait for a future time.

        Right after `step`, the threads it woke are not counted until they wait again, so
        `step(dt); block_until_waiters(n)` returns once all n threads have reacted to the
        step and gone back to waiting.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._blocked() < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(min(remaining, _EVENT_POLL_SECONDS))
            return True
