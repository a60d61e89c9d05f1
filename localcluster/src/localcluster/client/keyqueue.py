"""A small work queue for the local cluster's controllers: keys, delays, one worker.

A key waits in the queue at most once however often it is added (adds coalesce, as in
client-go's workqueue); ``add_after`` parks a key until its delay passes. ``run_worker`` drains
the queue with one thread: a sync may return a delay to look at the key again later (e.g. when
``minReadySeconds`` will have passed), and a sync that raises is retried with a per-key
exponential back-off (conflicts and not-found races included: the next sync re-reads).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

RETRY_BASE_SECONDS = 0.05
RETRY_MAX_SECONDS = 5.0


class KeyQueue:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._ready: dict[str, None] = {}  # an insertion-ordered set
        self._delayed: list[tuple[float, int, str]] = []
        self._seq = itertools.count()

    def add(self, key: str) -> None:
        with self._cond:
            self._ready[key] = None
            self._cond.notify()

    def add_after(self, key: str, delay: float) -> None:
        with self._cond:
            heapq.heappush(self._delayed, (self._clock() + delay, next(self._seq), key))
            self._cond.notify()

    def __len__(self) -> int:
        with self._cond:
            return len(self._ready)

    def get(self, timeout: float) -> str | None:
        """The next ready key, or None after ``timeout`` seconds without one."""
        deadline = self._clock() + timeout
        with self._cond:
            while True:
                now = self._clock()
                while self._delayed and self._delayed[0][0] <= now:
                    self._ready[heapq.heappop(self._delayed)[2]] = None
                if self._ready:
                    key = next(iter(self._ready))
                    del self._ready[key]
                    return key
                if now >= deadline:
                    return None
                wait = deadline - now
                if self._delayed:
                    wait = min(wait, self._delayed[0][0] - now)
                self._cond.wait(max(wait, 0.001))


def run_worker(
    queue: KeyQueue,
    sync: Callable[[str], float | None],
    stop_event: threading.Event,
    name: str,
) -> threading.Thread:
    """Start the thread that syncs keys from ``queue`` until ``stop_event`` is set."""
    failures: dict[str, int] = {}

    def loop() -> None:
        while not stop_event.is_set():
            key = queue.get(0.5)
            if key is None:
                continue
            try:
                again = sync(key)
            except Exception as err:  # noqa: BLE001 - retried with back-off
                count = failures.get(key, 0)
                failures[key] = count + 1
                level = (
                    logging.DEBUG if getattr(err, "code", None) in (404, 409) else logging.WARNING
                )
                logger.log(
                    level,
                    "%s: sync of %s failed: %s",
                    name,
                    key,
                    err,
                    exc_info=level > logging.DEBUG,
                )
                queue.add_after(key, min(RETRY_BASE_SECONDS * 2**count, RETRY_MAX_SECONDS))
                continue
            failures.pop(key, None)
            if again is not None:
                queue.add_after(key, again)

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    return thread
