"""Injectable time source, so timing logic can be tested without sleeping.

`Clock` is the real clock: wall time (`now`, an aware UTC datetime) for timestamps that
go into API objects, and a monotonic reading (`monotonic`, seconds) for measuring
intervals. Every blocking wait goes through `sleep` or `wait(event, timeout)`.

Tests substitute a clock of virtual time (``test/support/fake_clock.py``); nothing here
knows about it.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime


class Clock:
    """The real clock."""

    def now(self) -> datetime:
        """Current wall time as an aware UTC datetime."""
        return datetime.now(UTC)

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; never goes backwards."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """Block for `seconds` (no-op when not positive)."""
        if seconds > 0:
            time.sleep(seconds)

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        """Block until `event` is set or `timeout` seconds pass; return whether it is set."""
        if timeout is not None and timeout <= 0:
            return event.is_set()
        return event.wait(timeout)

    def wait_until(self, event: threading.Event, deadline: float) -> bool:
        """Like `wait`, with an absolute `monotonic()` deadline.

        Loops that compute a deadline and then wait should use this: time that passes
        between the computation and the wait is not added on top.
        """
        return self.wait(event, deadline - self.monotonic())


REAL_CLOCK = Clock()
