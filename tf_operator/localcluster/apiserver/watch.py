"""Watches: the per-watcher bounded queue the registry fans events into.

The registry offers each committed event to every watch on that resource while it holds its lock;
an offer never blocks. A watch whose queue is full (a consumer that cannot keep up) is closed and
dropped instead, so a slow watcher can never hold up writers. ``get`` returns a private copy of
the object; the HTTP layer uses ``next_event`` to serialise the shared, immutable stored object.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .objects import clone


@dataclass(eq=False)
class Event:
    """One committed change, as kept in the history ring and handed to watches."""

    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    storage_key: tuple[str, str]
    namespace: str
    obj: dict  # immutable stored state (for DELETED: the last state with the delete's RV)
    old: dict | None = None
    cache: dict[Any, bytes] = field(default_factory=dict)  # serialised forms, by the HTTP layer


class Watch:
    """A stream of ``(type, object)`` events for one resource, namespace and selector."""

    def __init__(
        self,
        namespace: str | None,
        predicate: Callable[[dict], bool] | None,
        present: Callable[[dict], dict],
        capacity: int,
        on_stop: Callable[[Watch], None],
    ) -> None:
        self.namespace = namespace
        self.predicate = predicate
        self._present = present
        self._capacity = capacity
        self._on_stop = on_stop
        self._queue: deque[tuple[str, Event]] = deque()
        self._cond = threading.Condition(threading.Lock())
        self.closed = False
        self.close_reason = ""
        self.progress_rv = 0  # every event up to here was considered for this watch
        self.start_rv = 0  # the RV the watch started at
        self.initial_count = 0  # synthetic ADDED events queued at start (no RV given)

    # -- producer side (called with the registry lock held) --------------------------------
    def translate(self, ev: Event) -> str | None:
        """The event type this watch sees for ``ev`` (selector transitions become ADDED or
        DELETED), or None when ``ev`` does not concern it."""
        if self.namespace and ev.namespace != self.namespace:
            return None
        etype = ev.type
        if self.predicate is not None:
            now = self.predicate(ev.obj)
            before = ev.old is not None and self.predicate(ev.old)
            if etype == "MODIFIED":
                if not now and not before:
                    return None
                if not now:
                    return "DELETED"
                if not before:
                    return "ADDED"
            elif not now:
                return None
        return etype

    def offer(self, ev: Event) -> None:
        """Queue ``ev`` if it concerns this watch; a full queue closes the watch instead."""
        if self.closed:
            return
        self.progress_rv = ev.rv
        etype = self.translate(ev)
        if etype is not None:
            self._put(etype, ev)

    def _put(self, etype: str, ev: Event) -> None:
        with self._cond:
            if len(self._queue) >= self._capacity:
                self.closed = True
                self.close_reason = "watcher too slow: queue full"
            else:
                self._queue.append((etype, ev))
            self._cond.notify()

    def preload(self, events: list[tuple[str, Event]]) -> None:
        """Queue the initial (synthetic or replayed) events; they never count against capacity."""
        with self._cond:
            self._queue.extend(events)
            self._capacity += len(events)

    def close(self, reason: str) -> None:
        with self._cond:
            if not self.closed:
                self.closed = True
                self.close_reason = reason
            self._cond.notify_all()

    # -- consumer side --------------------------------------------------------------------
    def next_event(self, timeout: float) -> tuple[str, Event] | None:
        """The next queued ``(type, Event)``; None on timeout or when closed and drained."""
        with self._cond:
            if not self._queue and not self.closed:
                self._cond.wait(timeout)
            if self._queue:
                return self._queue.popleft()
            return None

    def pending(self) -> int:
        with self._cond:
            return len(self._queue)

    def get(self, timeout: float) -> tuple[str, dict] | None:
        """``(event type, object copy)``; None on timeout, or at once once ``closed``."""
        item = self.next_event(timeout)
        if item is None:
            return None
        etype, ev = item
        return etype, clone(self.present(ev.obj))

    def present(self, obj: dict) -> dict:
        return self._present(obj)

    def stop(self) -> None:
        self.close("stopped by client")
        self._on_stop(self)

    def __iter__(self):
        while not self.closed or self.pending():
            item = self.get(1.0)
            if item is not None:
                yield item
