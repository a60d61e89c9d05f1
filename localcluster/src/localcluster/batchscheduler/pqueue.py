"""A heap ordered by a session's comparison hooks (upstream ``util.PriorityQueue``).

Keys are evaluated when items are compared, so an item whose standing changed while queued
(a job that became ready) is judged by its current state, as upstream's heap does.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class PriorityQueue(Generic[T]):
    def __init__(self, key: Callable[[T], Any]) -> None:
        self._key = key
        self._heap: list[tuple[Any, int, T]] = []
        self._count = 0

    def push(self, item: T) -> None:
        heapq.heappush(self._heap, (self._key(item), self._count, item))
        self._count += 1

    def pop(self) -> T:
        return heapq.heappop(self._heap)[2]

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)
