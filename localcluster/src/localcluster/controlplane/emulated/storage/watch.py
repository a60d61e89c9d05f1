"""Watches: the per-watcher bounded queue the registry fans events into.

The registry offers each committed event to every watch on that resource while it holds its lock;
an offer never blocks. A watch whose queue is full (a consumer that cannot keep up) is closed and
dropped instead, so a slow watcher can never hold up writers. ``get`` returns a private copy of
the object; ``get_shared`` the stored object itself (immutable: never mutate it), which the
local cluster's own informers share as one process's shared informers share their cache; the
HTTP layer uses ``next_event`` to serialise it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from localcluster.apimachinery.objects import clone


@dataclass(eq=False)
class Event:
    """One committed change, as kept in the history ring and handed to watches."""

    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    storage_key: tuple[str, str]
    namespace: str
    obj: dict[str, Any]  # immutable stored state (for DELETED: the last state with the delete's RV)
    old: dict[str, Any] | None = None
    cache: dict[Any, bytes] = field(default_factory=dict)  # serialised forms, by the HTTP layer


class Watch:
    """A stream of ``(type, object)`` events for one resource, namespace and selector."""

    def __init__(
        self,
        namespace: str | None,
        predicate: Callable[[dict[str, Any]], bool] | None,
        present: Callable[[dict[str, Any]], dict[str, Any]],
        capacity: int,
        on_stop: Callable[[Watch], None],
        storage_key: tuple[str, str] = ("", ""),
    ) -> None:
        self.storage_key = storage_key  # the (group, plural) it watches
        self.namespace = namespace
        self.predicate = predicate
        self._present = present
        self._capacity = capacity
        self._on_stop = on_stop
        # deque appends and pops are atomic; ``_ready`` is set whenever the queue may be non-empty
        # (or the watch closed). The consumer clears it before its last look at the queue, so a
        # producer's append-then-set can never be missed, and producers pay for a set() only
        # when the consumer may be asleep.
        self._queue: deque[tuple[str, Event]] = deque()
        self._ready = threading.Event()
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
        if len(self._queue) >= self._capacity:
            self.close("watcher too slow: queue full")
            return
        self._queue.append((etype, ev))
        if not self._ready.is_set():
            self._ready.set()

    def preload(self, events: list[tuple[str, Event]]) -> None:
        """Queue the initial (synthetic or replayed) events; they never count against capacity."""
        self._queue.extend(events)
        self._capacity += len(events)
        self._ready.set()

    def close(self, reason: str) -> None:
        if not self.closed:
            self.close_reason = reason
            self.closed = True
        self._ready.set()

    # -- consumer side (one consumer thread) ------------------------------------------------
    def next_event(self, timeout: float) -> tuple[str, Event] | None:
        """The next queued ``(type, Event)``; None on timeout or when closed and drained."""
        queue = self._queue
        if queue:
            return queue.popleft()
        if self.closed:
            return None
        self._ready.clear()
        if not queue and not self.closed and timeout > 0:
            self._ready.wait(timeout)
        return queue.popleft() if queue else None

    def pending(self) -> int:
        return len(self._queue)

    def wait(self, timeout: float) -> bool:
        """Block until an event may be queued (or the watch closed), without consuming it; lets
        a consumer pop under its own lock (``Informer.sync``)."""
        if self._queue or self.closed:
            return True
        self._ready.clear()
        if not self._queue and not self.closed:
            self._ready.wait(timeout)
        return bool(self._queue) or self.closed

    def get(self, timeout: float) -> tuple[str, dict[str, Any]] | None:
        """``(event type, object copy)``; None on timeout, or at once once ``closed``."""
        item = self.get_shared(timeout)
        return None if item is None else (item[0], clone(item[1]))

    def get_shared(self, timeout: float) -> tuple[str, dict[str, Any]] | None:
        """``(event type, stored object)`` as ``get``, without the copy (shared: never mutate
        it)."""
        item = self.next_event(timeout)
        if item is None:
            return None
        etype, ev = item
        return etype, self.present(ev.obj)

    def present(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self._present(obj)

    def stop(self) -> None:
        self.close("stopped by client")
        self._on_stop(self)

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        while not self.closed or self.pending():
            item = self.get(1.0)
            if item is not None:
                yield item
