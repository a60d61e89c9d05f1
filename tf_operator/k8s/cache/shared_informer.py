"""SharedIndexInformer: one watch and one cache, many event handlers.

Design (client-go's ``shared_informer.go``):

* An :class:`InformerEngine` runs the reflector into a DeltaFIFO whose
  ``known_objects`` is this informer's indexer, and pops deltas into
  :meth:`SharedIndexInformer.handle_deltas`, which updates the indexer first
  and then tells every handler. So when a handler runs, the cache already
  holds the change.
* Each handler gets its own :class:`ProcessorListener`: an unbounded buffer
  and a thread of its own. Distributing a notification only appends to the
  buffers, so a slow handler delays nobody but itself, and each handler sees
  notifications in order. A handler added with ``inline=True`` (not in
  client-go) is called directly by the thread applying the deltas instead:
  for handlers that only enqueue a key, this saves a thread hand-off per
  event; such a handler must never block.
* Resync: every handler may ask for its own resync period. The reflector
  checks every ``resync_check_period`` (the smallest period asked for) whether
  some handler is due; if so the queue re-delivers every cached object and
  only the due handlers receive it, as ``on_update(obj, obj)``.
* A handler added after start first receives the current cache content as
  adds, under the same lock that ``handle_deltas`` takes, so it misses and
  duplicates nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from tf_operator.k8s.cache.delta_fifo import (
    ADDED,
    DELETED,
    REPLACED,
    SYNC,
    UPDATED,
    Delta,
    DeltaFIFO,
)
from tf_operator.k8s.cache.engine import EngineConfig, InformerEngine
from tf_operator.k8s.cache.handlers import ResourceEventHandler
from tf_operator.k8s.cache.index import Indexers
from tf_operator.k8s.cache.keys import (
    deletion_handling_meta_namespace_key_func,
    meta_namespace_key_func,
)
from tf_operator.k8s.cache.reflector import MIN_WATCH_TIMEOUT, Backoff
from tf_operator.k8s.cache.store import Indexer, new_indexer
from tf_operator.k8s.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

MINIMUM_RESYNC_PERIOD = 1.0  # seconds; shorter requests are raised to this
_SYNC_POLL = 0.05  # how often wait_for_cache_sync re-checks


class ProcessorListener:
    """Feeds one handler from an unbounded buffer, in its own thread."""

    def __init__(
        self,
        handler: ResourceEventHandler,
        requested_resync_period: float,
        resync_period: float,
        now: float,
        inline: bool = False,
    ) -> None:
        self.handler = handler
        self.inline = inline
        self.requested_resync_period = requested_resync_period
        self._resync_period = resync_period
        self._next_resync = now + resync_period
        self._cond = threading.Condition()
        self._pending: deque[tuple[Any, ...]] = deque()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def add(self, notification: tuple[Any, ...]) -> None:
        if self.inline:
            self._deliver(notification)
            return
        with self._cond:
            self._pending.append(notification)
            self._cond.notify()

    def start(self) -> None:
        if self.inline:
            return
        self._thread = threading.Thread(
            target=self._run, name=f"handler {type(self.handler).__name__}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def pending(self) -> int:
        with self._cond:
            return len(self._pending)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                notification = self._pending.popleft()
            self._deliver(notification)

    def _deliver(self, notification: tuple[Any, ...]) -> None:
        try:
            kind = notification[0]
            if kind == "update":
                self.handler.on_update(notification[1], notification[2])
            elif kind == "add":
                self.handler.on_add(notification[1])
            else:
                self.handler.on_delete(notification[1])
        except Exception:  # noqa: BLE001 - one bad event must not kill the handler
            log.exception("event handler %r failed", self.handler)

    # ---- resync bookkeeping (guarded by the processor's lock) -----------------------
    def should_resync(self, now: float) -> bool:
        return self._resync_period > 0 and now >= self._next_resync

    def determine_next_resync(self, now: float) -> None:
        self._next_resync = now + self._resync_period

    def set_resync_period(self, period: float) -> None:
        self._resync_period = period


class SharedProcessor:
    """The set of listeners of one informer, and which of them are due a resync."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._lock = threading.RLock()
        self._listeners: list[ProcessorListener] = []
        self._syncing: list[ProcessorListener] = []
        self._started = False

    def add_listener(self, listener: ProcessorListener) -> None:
        with self._lock:
            self._listeners.append(listener)
            self._syncing.append(listener)
            if self._started:
                listener.start()

    def distribute(self, notification: tuple[Any, ...], sync: bool) -> None:
        with self._lock:
            for listener in self._syncing if sync else self._listeners:
                listener.add(notification)

    def start(self) -> None:
        with self._lock:
            for listener in self._listeners:
                listener.start()
            self._started = True

    def stop(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        # Listeners finish the handler call in progress and then exit on their own;
        # a handler stuck in a call must not hold up the informer's shutdown.
        for listener in listeners:
            listener.stop()

    def should_resync(self) -> bool:
        """Pick the listeners whose resync is due; True if there are any."""
        with self._lock:
            now = self.clock.monotonic()
            self._syncing = []
            for listener in self._listeners:
                if listener.should_resync(now):
                    self._syncing.append(listener)
                    listener.determine_next_resync(now)
            return bool(self._syncing)

    def resync_check_period_changed(self, check_period: float) -> None:
        with self._lock:
            for listener in self._listeners:
                listener.set_resync_period(
                    _determine_resync_period(listener.requested_resync_period, check_period)
                )

    def listeners(self) -> list[ProcessorListener]:
        with self._lock:
            return list(self._listeners)


def _determine_resync_period(desired: float, check: float) -> float:
    if desired <= 0:
        return 0.0
    if check <= 0:
        log.warning("resync period %.1fs ignored: this informer does not resync", desired)
        return 0.0
    return max(desired, check)


class SharedIndexInformer:
    """A cache of one resource kept current by list+watch, with handlers.

    ``run(stop_event)`` blocks until the event is set. Handlers and indexers
    are normally added before ``run``; indexers cannot be added after.
    """

    def __init__(
        self,
        lister_watcher: Any,
        default_event_handler_resync_period: float = 0.0,
        indexers: Indexers | None = None,
        name: str = "",
        expected_kind: str | None = None,
        expected_api_version: str | None = None,
        clock: Clock | None = None,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        backoff: Backoff | None = None,
        allow_bookmarks: bool = False,
    ) -> None:
        self.lister_watcher = lister_watcher
        self.allow_bookmarks = allow_bookmarks
        self.name = name or repr(lister_watcher)
        self.clock = clock or REAL_CLOCK
        self._indexer: Indexer = new_indexer(deletion_handling_meta_namespace_key_func, indexers)
        self._processor = SharedProcessor(self.clock)
        self.default_resync_period = default_event_handler_resync_period
        self.resync_check_period = default_event_handler_resync_period
        self.expected_kind = expected_kind
        self.expected_api_version = expected_api_version
        self.min_watch_timeout = min_watch_timeout
        self.backoff = backoff
        self._started_lock = threading.Lock()
        self._block_deltas = threading.RLock()
        self._engine: InformerEngine | None = None
        self._started = False
        self._stopped = False
        self._transform: Callable[[Any], Any] | None = None

    # ---- configuration ----------------------------------------------------------------
    def add_event_handler(
        self,
        handler: ResourceEventHandler,
        resync_period: float | None = None,
        inline: bool = False,
    ) -> None:
        """Register ``handler``; with ``resync_period`` it gets its own resync cadence; with
        ``inline`` it is called by the informer's own thread (it must never block)."""
        if resync_period is None:
            resync_period = self.default_resync_period
        with self._started_lock:
            if self._stopped:
                log.info("informer %s stopped: handler %r not added", self.name, handler)
                return
            if resync_period > 0:
                resync_period = max(resync_period, MINIMUM_RESYNC_PERIOD)
                if resync_period < self.resync_check_period or self.resync_check_period <= 0:
                    if self._started:
                        if self.resync_check_period > 0:
                            resync_period = self.resync_check_period
                    else:
                        self.resync_check_period = resync_period
                        self._processor.resync_check_period_changed(resync_period)
            listener = ProcessorListener(
                handler,
                resync_period,
                _determine_resync_period(resync_period, self.resync_check_period),
                self.clock.monotonic(),
                inline,
            )
            if not self._started:
                self._processor.add_listener(listener)
                return
            with self._block_deltas:
                self._processor.add_listener(listener)
                for obj in self._indexer.list():
                    listener.add(("add", obj))

    def add_indexers(self, indexers: Indexers) -> None:
        with self._started_lock:
            if self._started:
                raise RuntimeError("informer has already started")
            self._indexer.add_indexers(indexers)

    def set_transform(self, transform: Callable[[Any], Any]) -> None:
        """Transform every object before it is cached (client-go's ``SetTransform``): drop
        what no handler reads so the cache holds less. Must be idempotent; before ``run``."""
        with self._started_lock:
            if self._started:
                raise RuntimeError("informer has already started")
            self._transform = transform

    def get_indexer(self) -> Indexer:
        return self._indexer

    def get_store(self) -> Indexer:
        return self._indexer

    # ---- state --------------------------------------------------------------------------
    def has_synced(self) -> bool:
        with self._started_lock:
            return self._engine is not None and self._engine.has_synced()

    def last_sync_resource_version(self) -> str:
        with self._started_lock:
            return self._engine.last_sync_resource_version() if self._engine else ""

    @property
    def reflector(self) -> Any:
        with self._started_lock:
            return self._engine.reflector if self._engine else None

    # ---- running ------------------------------------------------------------------------
    def run(self, stop_event: threading.Event) -> None:
        # The reflector transforms what it lists and watches (page by page, D49); the cache
        # and resyncs then hold only transformed objects, so the queue need not transform.
        fifo = DeltaFIFO(meta_namespace_key_func, known_objects=self._indexer)
        with self._started_lock:
            if self._started:
                raise RuntimeError("informer already started")
            self._engine = InformerEngine(
                EngineConfig(
                    queue=fifo,
                    lister_watcher=self.lister_watcher,
                    process=self.handle_deltas,
                    full_resync_period=self.resync_check_period,
                    should_resync=self._processor.should_resync,
                    name=self.name,
                    min_watch_timeout=self.min_watch_timeout,
                    expected_kind=self.expected_kind,
                    expected_api_version=self.expected_api_version,
                    clock=self.clock,
                    backoff=self.backoff,
                    allow_bookmarks=self.allow_bookmarks,
                    transform=self._transform,
                )
            )
            self._started = True
        self._processor.start()
        try:
            self._engine.run(stop_event)
        finally:
            with self._started_lock:
                self._stopped = True
            self._processor.stop()

    def handle_deltas(self, deltas: list[Delta]) -> None:
        """Apply one key's deltas to the indexer, then notify the handlers."""
        with self._block_deltas:
            for delta in deltas:
                obj = delta.object
                if delta.type in (SYNC, REPLACED, ADDED, UPDATED):
                    old = self._indexer.get(obj)
                    if old is not None:
                        if old is not obj:  # a resync re-delivers the cached object itself
                            self._indexer.update(obj)
                        sync = delta.type == SYNC or (
                            delta.type == REPLACED and _same_version(old, obj)
                        )
                        self._processor.distribute(("update", old, obj), sync)
                    else:
                        self._indexer.add(obj)
                        self._processor.distribute(("add", obj), delta.type == SYNC)
                elif delta.type == DELETED:
                    self._indexer.delete(obj)
                    self._processor.distribute(("delete", obj), False)


def _same_version(old: Any, new: Any) -> bool:
    try:
        rv = old["metadata"]["resourceVersion"]
        return bool(rv) and rv == new["metadata"]["resourceVersion"]
    except (KeyError, TypeError):
        return False


def wait_for_cache_sync(
    stop_event: threading.Event, *has_synced_fns: Callable[[], bool], timeout: float | None = None
) -> bool:
    """Wait until every function returns True; False on stop or timeout."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if all(fn() for fn in has_synced_fns):
            return True
        if stop_event.is_set():
            return False
        wait = _SYNC_POLL
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                log.info("timed out waiting for caches to sync")
                return False
            wait = min(wait, left)
        stop_event.wait(wait)
