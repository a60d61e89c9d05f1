"""DeltaFIFO: a queue of per-object change lists between a reflector and the cache.

Producers (the reflector) record what happened to each object as
:class:`Delta` s: Added, Updated, Deleted, Replaced (the object was in a fresh
list) and Sync (a periodic resync of an object already known). Deltas for one
key accumulate in order while the key waits in the queue; a key is queued once
no matter how many deltas it gathers, and consumers pop all of a key's deltas
at once, oldest first. Two consecutive deletes collapse into one.

``replace`` is what a relist calls: every listed object gets a Replaced delta,
and every object the cache still knows (``known_objects``) or the queue still
holds but the list lacks gets a Deleted delta carrying a
:class:`DeletedFinalStateUnknown` tombstone, because the real delete event was
missed. ``has_synced`` turns true once everything queued by the first
``replace`` has been popped and processed.

With a ``transform`` (client-go's ``TransformFunc``), every object handed in by a producer is
replaced by what it returns before it is queued, so the cache only ever holds transformed
objects (a resync re-queues cached, already transformed objects: transforms must be
idempotent). Tombstones are not transformed.

``pop`` calls the process function with the queue lock held, so nobody
observes a key as popped-but-not-processed (``has_synced`` and ``resync``
included); a process function raising :class:`RequeueError` puts the deltas
back unless newer ones have arrived.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tf_operator.k8s.cache.keys import meta_namespace_key_func

log = logging.getLogger(__name__)

ADDED = "Added"
UPDATED = "Updated"
DELETED = "Deleted"
REPLACED = "Replaced"
SYNC = "Sync"


@dataclass(frozen=True)
class Delta:
    type: str
    object: Any


@dataclass(frozen=True)
class DeletedFinalStateUnknown:
    """An object deleted while we were not watching; ``obj`` is its last known state.

    Delete handlers receive this instead of an object when a relist found the
    object gone. ``obj`` may be stale, or None if nothing was known.
    """

    key: str
    obj: Any


class FIFOClosedError(Exception):
    """Raised by ``pop`` once the queue is closed."""


class RequeueError(Exception):
    """Raise from a process function to put the popped deltas back in the queue."""

    def __init__(self, err: BaseException | None = None) -> None:
        super().__init__(str(err) if err else "requeue")
        self.err = err


class KnownObjects(Protocol):
    def list_keys(self) -> builtins.list[str]: ...

    def get_by_key(self, key: str) -> Any | None: ...


class DeltaFIFO:
    def __init__(
        self,
        key_func: Callable[[Any], str] = meta_namespace_key_func,
        known_objects: KnownObjects | None = None,
        emit_delta_type_replaced: bool = True,
        transform: Callable[[Any], Any] | None = None,
    ) -> None:
        self._key_func = key_func
        self._transform = transform
        self.known_objects = known_objects
        self._replaced_type = REPLACED if emit_delta_type_replaced else SYNC
        self._cond = threading.Condition(threading.RLock())
        self._items: dict[str, list[Delta]] = {}
        self._queue: deque[str] = deque()
        self._populated = False
        self._initial_population_count = 0
        self._closed = False

    # ---- keys ---------------------------------------------------------------------
    def key_of(self, obj: Any) -> str:
        if isinstance(obj, list) and obj and isinstance(obj[-1], Delta):
            obj = obj[-1].object
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        return self._key_func(obj)

    # ---- producers ------------------------------------------------------------------
    def add(self, obj: Any) -> None:
        with self._cond:
            self._populated = True
            self._queue_action(ADDED, obj)
            self._cond.notify()

    def update(self, obj: Any) -> None:
        with self._cond:
            self._populated = True
            self._queue_action(UPDATED, obj)
            self._cond.notify()

    def delete(self, obj: Any) -> None:
        """Queue a deletion, unless nothing is known about the object at all."""
        key = self.key_of(obj)
        with self._cond:
            self._populated = True
            if key not in self._items and (
                self.known_objects is None or self.known_objects.get_by_key(key) is None
            ):
                return  # already gone from both the queue and the cache
            self._queue_action(DELETED, obj)
            self._cond.notify()

    def add_if_not_present(self, deltas: builtins.list[Delta]) -> None:
        """Requeue popped deltas unless the key has been queued again meanwhile."""
        key = self.key_of(deltas)
        with self._cond:
            self._populated = True
            if key in self._items:
                return
            self._queue.append(key)
            self._items[key] = list(deltas)
            self._cond.notify_all()

    def replace(self, items: builtins.list[Any], resource_version: str = "") -> None:
        """Record a full list: Replaced for each item, tombstones for what vanished."""
        with self._cond:
            listed: set[str] = set()
            for obj in items:
                key = self.key_of(obj)
                listed.add(key)
                self._queue_action(self._replaced_type, obj, key)
            # Queued objects the list lacks: their pending deltas would otherwise
            # re-add them to the cache with nothing left to delete them.
            for key, deltas in list(self._items.items()):
                if key in listed or deltas[-1].type == DELETED:
                    continue
                newest = deltas[-1].object
                if isinstance(newest, DeletedFinalStateUnknown):
                    newest = newest.obj
                self._queue_action(DELETED, DeletedFinalStateUnknown(key, newest), key)
            if self.known_objects is not None:
                for key in self.known_objects.list_keys():
                    if key in listed or key in self._items:
                        continue
                    last = self.known_objects.get_by_key(key)
                    self._queue_action(DELETED, DeletedFinalStateUnknown(key, last), key)
            if not self._populated:
                self._populated = True
                self._initial_population_count = len(self._queue)
            self._cond.notify_all()

    def resync(self) -> None:
        """Queue a Sync for every known object that has nothing queued already."""
        with self._cond:
            if self.known_objects is None:
                return
            for key in self.known_objects.list_keys():
                if self._items.get(key):
                    continue
                obj = self.known_objects.get_by_key(key)
                if obj is not None:
                    self._queue_action(SYNC, obj, key)
            self._cond.notify_all()

    def _queue_action(self, delta_type: str, obj: Any, key: str | None = None) -> None:
        if key is None:
            key = self.key_of(obj)
        if self._transform is not None and not isinstance(obj, DeletedFinalStateUnknown):
            obj = self._transform(obj)
        deltas = self._items.get(key)
        if delta_type == SYNC and deltas and deltas[-1].type == DELETED:
            return  # a resync must not resurrect an object about to be deleted
        new = Delta(delta_type, obj)
        if deltas is None:
            self._items[key] = [new]
            self._queue.append(key)
        else:
            deltas.append(new)
            _dedup_tail(deltas)

    # ---- consumers ----------------------------------------------------------------------
    def pop(self, process: Callable[[list[Delta]], None], timeout: float | None = None) -> Any:
        """Pop the oldest key's deltas and process them under the queue lock.

        Blocks until something is queued (or ``timeout`` passes: returns None).
        Raises FIFOClosedError once closed and empty-handed.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._queue:
                if self._closed:
                    raise FIFOClosedError()
                if deadline is None:
                    self._cond.wait()
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            key = self._queue.popleft()
            if self._initial_population_count > 0:
                self._initial_population_count -= 1
            deltas = self._items.pop(key)
            try:
                process(deltas)
            except RequeueError as exc:
                self.add_if_not_present(deltas)
                if exc.err is not None:
                    raise exc.err from None
            return deltas

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def is_closed(self) -> bool:
        with self._cond:
            return self._closed

    def has_synced(self) -> bool:
        """True once the first replace (or any add) happened and its items were processed."""
        with self._cond:
            return self._populated and self._initial_population_count == 0

    # ---- reads --------------------------------------------------------------------------
    def list(self) -> builtins.list[Any]:
        """The newest object of every queued key."""
        with self._cond:
            return [deltas[-1].object for deltas in self._items.values()]

    def list_keys(self) -> builtins.list[str]:
        with self._cond:
            return list(self._items)

    def get(self, obj: Any) -> builtins.list[Delta] | None:
        return self.get_by_key(self.key_of(obj))

    def get_by_key(self, key: str) -> builtins.list[Delta] | None:
        with self._cond:
            deltas = self._items.get(key)
            return list(deltas) if deltas is not None else None

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)


def _dedup_tail(deltas: builtins.list[Delta]) -> None:
    """Collapse the last two deltas if both are deletions (keep the more informative)."""
    if len(deltas) < 2:
        return
    newer, older = deltas[-1], deltas[-2]
    if newer.type != DELETED or older.type != DELETED:
        return
    keep = newer if isinstance(older.object, DeletedFinalStateUnknown) else older
    deltas[-2:] = [keep]
