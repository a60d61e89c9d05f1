"""A recorder for tests: keeps each event as the string "Type Reason message"."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any


class FakeRecorder:
    """Thread-safe; `events` lists what was recorded, in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[str] = []

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None:
        with self._lock:
            self.events.append(f"{event_type} {reason} {message}")

    def eventf(self, obj: Any, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    def past_eventf(
        self, obj: Any, timestamp: datetime, event_type: str, reason: str, fmt: str, *args: Any
    ) -> None:
        """Dropped, as upstream's fake does."""

    def annotated_eventf(
        self,
        obj: Any,
        annotations: dict[str, str],
        event_type: str,
        reason: str,
        fmt: str,
        *args: Any,
    ) -> None:
        self.eventf(obj, event_type, reason, fmt, *args)

    def clear(self) -> None:
        with self._lock:
            self.events.clear()
