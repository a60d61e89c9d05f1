"""The informer's engine: a reflector filling a DeltaFIFO, and a loop popping it.

:class:`Controller` runs the reflector in a thread and, in the caller's thread,
pops deltas from the queue into ``process`` (the shared informer's
``handle_deltas``) until stopped; a failed ``process`` is logged, and requeued
when ``retry_on_error`` is set. ``has_synced`` is the queue's: true once the
first list has been processed entirely.
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
class Config:
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


class Controller:
    def __init__(self, config: Config) -> None:
        self.config = config
        self._lock = threading.Lock()
        self.reflector: Reflector | None = None

    def run(self, stop_event: threading.Event) -> None:
        """Blocks until ``stop_event`` is set."""
        cfg = self.config
        reflector = Reflector(
            cfg.lister_watcher,
            cfg.queue,
            name=cfg.name,
            resync_period=cfg.full_resync_period,
            should_resync=cfg.should_resync,
            min_watch_timeout=cfg.min_watch_timeout,
            expected_kind=cfg.expected_kind,
            expected_api_version=cfg.expected_api_version,
            clock=cfg.clock,
            backoff=cfg.backoff,
            allow_bookmarks=cfg.allow_bookmarks,
        )
        with self._lock:
            self.reflector = reflector
        thread = threading.Thread(
            target=reflector.run,
            args=(stop_event, cfg.queue.close),  # a stop also wakes the pop below
            name=f"reflector {cfg.name}",
            daemon=True,
        )
        thread.start()
        self._process_loop(stop_event)
        thread.join()

    def _process_loop(self, stop_event: threading.Event) -> None:
        queue = self.config.queue
        while not stop_event.is_set():  # once stopped, queued deltas are dropped
            try:
                queue.pop(self._process)
            except FIFOClosedError:
                return
            except Exception:  # noqa: BLE001 - a bad object must not stop the informer
                log.exception("informer %s: processing deltas failed", self.config.name)

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
