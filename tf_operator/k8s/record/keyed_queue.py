"""A bounded FIFO that several consumer threads drain while serialising items per key.

Event delivery needs concurrency across objects but strict order for one object: a repeat
of an event must patch the Event created by the first occurrence, so the two writes may
not race. Each item carries a key; at most one item per key is handed out at a time, and
among the keys that are free, the one whose oldest item was offered first goes next. With
one consumer this is plain FIFO. A key whose consumer is busy (for instance pausing
between retries) holds back only its own items, never other keys'.

The optional bound counts items waiting, not the ones being processed, like a buffered
channel; without one nothing is ever refused but after ``close``.

A consumer that finished an item passes its key to its next ``take``: the key is released and
the next item taken under one lock, and no other consumer is woken for what this one takes
itself (the events of one object come one after another: with ``done`` then ``take``, every
one of them woke an idle consumer only for the finishing one to take it first). Another is
woken only when more work is ready than this consumer takes.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque
from collections.abc import Hashable
from typing import Any

# `take`'s "no key finished" (None is a key like any other).
NOTHING: Hashable = object()


class KeyedQueue:
    """Non-blocking `offer` (refused only when full or closed); `take` blocks until an item
    of a free key is ready."""

    def __init__(self, max_items: int | None = None) -> None:
        self._max_items = max_items
        self._cond = threading.Condition(threading.Lock())
        self._items: dict[Hashable, deque[tuple[int, Any]]] = {}
        self._ready: list[tuple[int, Hashable]] = []  # (seq of the key's oldest item, key)
        self._busy: set[Hashable] = set()
        self._seq = itertools.count()
        self._count = 0
        self._closed = False
        self._idle = 0  # consumers blocked in take()

    def offer(self, key: Hashable, item: Any) -> bool:
        """Queue `item` under `key`; False (at once) when full or closed."""
        with self._cond:
            if self._closed or (self._max_items is not None and self._count >= self._max_items):
                return False
            seq = next(self._seq)
            pending = self._items.get(key)
            if pending is None:
                pending = self._items[key] = deque()
                if key not in self._busy:
                    heapq.heappush(self._ready, (seq, key))
                    self._cond.notify()
            pending.append((seq, item))
            self._count += 1
            return True

    def take(self, finished: Hashable = NOTHING) -> tuple[Hashable, Any] | None:
        """The next item of a free key, marking the key busy; None once closed and drained.

        ``finished``: the key of the item this consumer just processed, released first (as
        ``done``, without waking another consumer for it)."""
        with self._cond:
            if finished is not NOTHING:
                self._release(finished, wake=False)
            while not self._ready:
                if self._closed and self._count == 0:
                    return None
                self._idle += 1
                try:
                    self._cond.wait()
                finally:
                    self._idle -= 1
            _, key = heapq.heappop(self._ready)
            pending = self._items[key]
            _, item = pending.popleft()
            if not pending:
                del self._items[key]
            self._busy.add(key)
            self._count -= 1
            if self._ready and self._idle:
                self._cond.notify()  # more is ready than this consumer takes
            return key, item

    def done(self, key: Hashable) -> None:
        """Release `key` after its item was processed, so its next item can be taken."""
        with self._cond:
            self._release(key, wake=True)

    def _release(self, key: Hashable, wake: bool) -> None:
        self._busy.discard(key)
        pending = self._items.get(key)
        if pending:
            heapq.heappush(self._ready, (pending[0][0], key))
            if wake:
                self._cond.notify()
        elif self._closed and self._count == 0:
            self._cond.notify_all()  # consumers waiting for the end can leave

    def close(self) -> None:
        """Accept no more items; consumers drain the rest, then `take` returns None."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        with self._cond:
            return self._closed

    def lacks_consumers(self) -> bool:
        """More items wait than consumers are idle to take them."""
        with self._cond:
            return self._count > self._idle

    def __len__(self) -> int:
        with self._cond:
            return self._count
