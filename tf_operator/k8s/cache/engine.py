"""The informer's engine: a reflector filling a DeltaFIFO, whose deltas are then processed.

:class:`InformerEngine` runs the reflector in the caller's thread. Unlike client-go, which pops
the queue in a goroutine of its own, the thread that queues a change (the reflector with a
watch event or a list, the resync thread with a resync) then pops the queue itself into
``process`` (the shared informer's ``handle_deltas``) until it is empty: in Python a second
thread buys no parallelism, only a wake-up and a hand-over of the GIL for every watch event.
The DeltaFIFO stays between them, so its semantics hold: deltas of one key gathered while
another thread is processing, tombstones on a relist, one key processed at a time, in order
(``pop`` processes under the queue's lock). A failed ``process`` is logged, and requeued
when ``retry_on_error`` is set (it is tried again after the next change is queued).
``has_synced`` is the queue's: true once the first list has been processed entirely.

client-go calls this ``controller.go``'s ``Controller``; here it is the informer's engine,
because everywhere else in this tree a controller is a reconcile loop (``k8s.controller``'s
helpers, the job controller, the TFJob controller).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tf_operator.k8s.cache.delta_fifo import Delta, DeltaFIFO, FIFOClosedError, RequeueError
from tf_operator.k8s.cache.reflector import MIN_WATCH_TIMEOUT, Backoff, Reflector
from tf_operator.k8s.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)


@dataclass
class EngineConfig:
    queue: DeltaFIFO
    lister_watcher: Any
    process: Callable[[list[Delta]], None]
    full_resync_period: float = 0.0
    should_resync: Callable[[], bool] | None = None
    retry_on_error: bool = False
    name: str = ""
    min_watch_timeout: float = MIN_WATCH_TIMEOUT
    expected_kind: str | None = None
    expected_api_version: str | None = None
    clock: Clock = REAL_CLOCK
    backoff: Backoff | None = None
    allow_bookmarks: bool = False
    transform: Callable[[Any], Any] | None = None  # applied to listed pages as they arrive


class InformerEngine:
    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self.reflector: Reflector | None = None

    def run(self, stop_event: threading.Event) -> None:
        """Blocks until ``stop_event`` is set."""
        cfg = self.config
        reflector = Reflector(
            cfg.lister_watcher,
            _ProcessingQueue(cfg.queue, lambda: self._drain(stop_event)),
            name=cfg.name,
            resync_period=cfg.full_resync_period,
            should_resync=cfg.should_resync,
            min_watch_timeout=cfg.min_watch_timeout,
            expected_kind=cfg.expected_kind,
            expected_api_version=cfg.expected_api_version,
            clock=cfg.clock,
            backoff=cfg.backoff,
            allow_bookmarks=cfg.allow_bookmarks,
            transform=cfg.transform,
        )
        with self._lock:
            self.reflector = reflector
        reflector.run(stop_event, cfg.queue.close)

    def _drain(self, stop_event: threading.Event) -> None:
        """Process what is queued, in order, until the queue is empty."""
        queue = self.config.queue
        while not stop_event.is_set():  # once stopped, queued deltas are dropped
            try:
                if queue.pop(self._process, timeout=0) is None:
                    return
            except FIFOClosedError:
                return
            except Exception:  # noqa: BLE001 - a bad object must not stop the informer
                log.exception("informer %s: processing deltas failed", self.config.name)
                return  # a requeued failure waits for the next change, not a hot loop

    def _process(self, deltas: list[Delta]) -> None:
        try:
            self.config.process(deltas)
        except Exception as exc:
            if self.config.retry_on_error:
                raise RequeueError(exc) from exc
            raise

    def has_synced(self) -> bool:
        return self.config.queue.has_synced()

    def last_sync_resource_version(self) -> str:
        with self._lock:
            return self.reflector.last_sync_resource_version() if self.reflector else ""


class _ProcessingQueue:
    """The DeltaFIFO as the reflector fills it: every change queued is then processed by
    the thread that queued it (see the module docstring)."""

    def __init__(self, fifo: DeltaFIFO, drain: Callable[[], None]) -> None:
        self._fifo = fifo
        self._drain = drain

    def add(self, obj: Any) -> None:
        self._fifo.add(obj)
        self._drain()

    def update(self, obj: Any) -> None:
        self._fifo.update(obj)
        self._drain()

    def delete(self, obj: Any) -> None:
        self._fifo.delete(obj)
        self._drain()

    def replace(self, items: list[Any], resource_version: str = "") -> None:
        self._fifo.replace(items, resource_version)
        self._drain()

    def resync(self) -> None:
        self._fifo.resync()
        self._drain()
