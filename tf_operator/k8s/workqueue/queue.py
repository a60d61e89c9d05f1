"""The plain work queue: fair, stingy, thread-safe, with clean shutdown.

State, all guarded by one condition variable:
- `_queue`: items ready to be handed out, in arrival order (a deque);
- `_dirty`: items that need processing (every item in `_queue`, plus items re-added while
  they were being processed);
- `_processing`: items handed to a worker and not yet `done`.

An item is appended to `_queue` only when it enters `_dirty` while not being processed,
or when `done` finds it dirty again. Hence an item is in `_queue` at most once, and never
while a worker holds it.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from tf_operator.k8s.clock import Clock
from tf_operator.k8s.workqueue.metrics import MetricsProvider, new_queue_metrics


class Queue:
    """FIFO work queue. Items must be hashable; equal items are the same work."""

    def __init__(
        self,
        name: str = "",
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        self.name = name
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[Any] = deque()
        self._dirty: set[Any] = set()
        self._processing: set[Any] = set()
        self._shutting_down = False
        self._metrics = new_queue_metrics(name, metrics_provider, clock)

    def add(self, item: Any) -> None:
        """Mark `item` as needing processing. No-op after `shut_down` or if already waiting."""
        with self._cond:
            if self._shutting_down or item in self._dirty:
                return
            if self._metrics is not None:
                self._metrics.add(item)
            self._dirty.add(item)
            if item in self._processing:
                return  # `done` will queue it again
            self._queue.append(item)
            self._cond.notify()

    def waiting(self, item: Any) -> bool:
        """True when ``item`` is queued and no worker has taken it yet: the worker that takes
        it will see whatever its producer saw until now."""
        with self._cond:
            return item in self._dirty and item not in self._processing

    def __len__(self) -> int:
        """Number of items waiting to be handed out (not those in progress)."""
        with self._cond:
            return len(self._queue)

    def get(self) -> tuple[Any, bool]:
        """Block until an item is available; return `(item, False)`.

        After `shut_down`, the items still waiting are handed out, then every call returns
        `(None, True)`. The caller must call `done(item)` when finished with it.
        """
        with self._cond:
            while not self._queue:
                if self._shutting_down:
                    return None, True
                self._cond.wait()
            item = self._queue.popleft()
            if self._metrics is not None:
                self._metrics.get(item)
            self._processing.add(item)
            self._dirty.discard(item)
            return item, False

    def done(self, item: Any) -> None:
        """Finish processing `item`; if it was re-added meanwhile, queue it again."""
        with self._cond:
            if self._metrics is not None:
                self._metrics.done(item)
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.append(item)
                self._cond.notify()

    def shut_down(self) -> None:
        """Stop accepting adds and wake every blocked `get`."""
        with self._cond:
            self._shutting_down = True
            self._cond.notify_all()

    def shutting_down(self) -> bool:
        with self._cond:
            return self._shutting_down
