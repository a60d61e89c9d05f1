"""The scheduling queue of a kube-scheduler profile: active, backing off, unschedulable.

As kube-scheduler's ``PriorityQueue``, by pod key:

- *active*: pods to try, popped in the order of the profile's QueueSort key (computed when
  the pod enters the queue);
- *backoff*: pods that failed and wait out their back-off, 1 s doubling per attempt up to
  10 s (``podInitialBackoffSeconds``/``podMaxBackoffSeconds``), then become active;
- *unschedulable*: pods that failed with nothing new to try them against. A cluster event
  (``move_all``: a pod or node added or gone, a PodGroup added or changed) sends them to
  backoff (or active once their back-off is over); so does a failure reported after an event
  that happened while the pod was being tried. Pods left there ``flush_seconds`` are moved as
  if an event had come (kube-scheduler waits 5 minutes; the local default scheduler retries
  every 5 s, and so does this queue).

``activate`` moves chosen pods (a gang's siblings) straight to active. Not thread-safe: the
scheduler calls it with its own lock held.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from typing import Any

INITIAL_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 10.0
FLUSH_SECONDS = 5.0


class SchedulingQueue:
    def __init__(
        self,
        sort_key: Callable[[str, float], Any],
        clock: Callable[[], float],
        wall_clock: Callable[[], float],
        flush_seconds: float = FLUSH_SECONDS,
    ) -> None:
        self._sort_key = sort_key  # (pod key, first time queued on the wall clock) -> key
        self._clock = clock
        self._wall_clock = wall_clock
        self._flush_seconds = flush_seconds
        self._seq = itertools.count()
        self._active: list[tuple[Any, int, str]] = []
        self._active_seq: dict[str, int] = {}  # key -> seq of its live heap entry
        self._backoff: list[tuple[float, int, str]] = []
        self._backoff_seq: dict[str, int] = {}
        self._unschedulable: dict[str, float] = {}  # key -> when it was parked (clock)
        self._first_queued: dict[str, float] = {}  # key -> wall clock of its first add
        self._attempts: dict[str, int] = {}
        self._failed_at: dict[str, float] = {}
        self._popped_cycle: dict[str, int] = {}
        self._cycle = 0
        self._move_cycle = -1

    # -- entering ---------------------------------------------------------------------------

    def add(self, key: str) -> None:
        """A new or changed pending pod: active unless it waits (backoff, unschedulable)."""
        if key in self._active_seq or key in self._backoff_seq or key in self._unschedulable:
            return
        self._push_active(key)

    def _push_active(self, key: str) -> None:
        self._backoff_seq.pop(key, None)
        self._unschedulable.pop(key, None)
        first = self._first_queued.setdefault(key, self._wall_clock())
        seq = next(self._seq)
        self._active_seq[key] = seq
        heapq.heappush(self._active, (self._sort_key(key, first), seq, key))

    def _push_backoff(self, key: str, until: float) -> None:
        self._active_seq.pop(key, None)
        self._unschedulable.pop(key, None)
        seq = next(self._seq)
        self._backoff_seq[key] = seq
        heapq.heappush(self._backoff, (until, seq, key))

    def backoff_until(self, key: str) -> float:
        seconds = INITIAL_BACKOFF_SECONDS
        for _ in range(1, self._attempts.get(key, 1)):
            seconds *= 2
            if seconds >= MAX_BACKOFF_SECONDS:
                seconds = MAX_BACKOFF_SECONDS
                break
        return self._failed_at.get(key, 0.0) + seconds

    # -- leaving ------------------------------------------------------------------------------

    def pop(self) -> str | None:
        """The next active pod (due back-offs and leftovers moved in first), or None."""
        now = self._clock()
        while self._backoff and self._backoff[0][0] <= now:
            _, seq, key = heapq.heappop(self._backoff)
            if self._backoff_seq.get(key) == seq:
                self._push_active(key)
        if self._unschedulable:
            leftovers = [
                k for k, t in self._unschedulable.items() if now - t >= self._flush_seconds
            ]
            self._move(leftovers, now)
        while self._active:
            _, seq, key = heapq.heappop(self._active)
            if self._active_seq.get(key) == seq:
                del self._active_seq[key]
                self._cycle += 1
                self._popped_cycle[key] = self._cycle
                self._attempts[key] = self._attempts.get(key, 0) + 1
                return key
        return None

    def next_due(self) -> float | None:
        """When the next backing-off pod becomes active, or a leftover is moved (clock)."""
        times = [
            until for until, seq, key in self._backoff[:1] if self._backoff_seq.get(key) == seq
        ]
        if self._unschedulable:
            times.append(min(self._unschedulable.values()) + self._flush_seconds)
        return min(times) if times else None

    def failed(self, key: str) -> None:
        """A popped pod could not be scheduled: park it, or back it off at once when a cluster
        event came while it was being tried."""
        now = self._clock()
        self._failed_at[key] = now
        if self._move_cycle >= self._popped_cycle.get(key, 0):
            self._push_backoff(key, self.backoff_until(key))
        else:
            self._active_seq.pop(key, None)
            self._unschedulable[key] = now

    def forget(self, key: str) -> None:
        """The pod is bound or gone: drop everything known about it."""
        for index in (self._active_seq, self._backoff_seq, self._unschedulable):
            index.pop(key, None)
        for record in (self._first_queued, self._attempts, self._failed_at, self._popped_cycle):
            record.pop(key, None)

    def attempts(self, key: str) -> int:
        """How many times the pod was popped since it was queued (0 once bound or gone)."""
        return self._attempts.get(key, 0)

    # -- moving -------------------------------------------------------------------------------

    def move_all(self) -> None:
        """A cluster event: every unschedulable pod may fit now."""
        self._move_cycle = self._cycle
        if self._unschedulable:
            self._move(list(self._unschedulable), self._clock())

    def _move(self, keys: Iterable[str], now: float) -> None:
        for key in keys:
            until = self.backoff_until(key)
            if until > now:
                self._push_backoff(key, until)
            else:
                self._push_active(key)

    def resort(self, keys: Iterable[str]) -> None:
        """Their sort keys changed (their PodGroup appeared): place active ones anew."""
        for key in keys:
            if key in self._active_seq:
                self._push_active(key)

    def activate(self, keys: Iterable[str]) -> None:
        """Move these pods, if unschedulable or backing off, to active now."""
        for key in keys:
            if key in self._unschedulable or key in self._backoff_seq:
                self._push_active(key)

    def __contains__(self, key: object) -> bool:
        return key in self._active_seq or key in self._backoff_seq or key in self._unschedulable

    def __len__(self) -> int:
        return len(self._active_seq) + len(self._backoff_seq) + len(self._unschedulable)
