"""Reflector: keeps a store in step with the API server by list, then watch.

The loop (client-go's ``ListAndWatch``):

1. List, in pages of ``page_size`` (limit/continue, as client-go's pager;
   ``limit=500&resourceVersion=0`` is what tf-operator v0.5.3 sends). The
   first list asks for resourceVersion "0" (the server may answer from its
   watch cache, ignoring the limit); a relist asks for the last
   resourceVersion seen, or, after the server said that version has expired
   (410), for "" (a consistent read). Each page is typed and transformed as it
   arrives (``transform``, the informer's; watch events are transformed too, so
   the store is handed only transformed objects), so a large relist never holds
   every object whole. When a continue token expires mid-list, client-go's pager
   lists everything in one go; ours pages again from the latest state, up to
   ``PAGED_LIST_ATTEMPTS`` times, first (divergence D49, docs/divergences.md).
   The items replace the store's content in one step.
2. Watch from the list's resourceVersion with a ``timeoutSeconds`` drawn from
   [min_watch_timeout, 2 * min_watch_timeout) so many clients do not reconnect
   in step. Each event goes to the store and advances the last-seen
   resourceVersion. Bookmarks are requested only if ``allow_bookmarks`` (off
   by default: v0.5.3's client-go never asks) and only advance it.
3. When a watch ends (server timeout, or a dropped connection), watch again
   from the last-seen resourceVersion: nothing is lost or repeated, because
   the server replays exactly what came after it. Only when that version is
   gone (410 at watch start, or an ERROR event carrying 410) or the server
   reports another error does the reflector relist; the store's ``replace``
   then turns whatever was missed into updates and tombstones.

Failures (list errors, watches that cannot start or break) back off
exponentially with jitter. A watch the server accepted and then ended within a
second without events is only throttled: the next watch waits a fixed
``short_watch_delay`` (v0.5.3's client-go re-ran ListAndWatch after a fixed 1 s
period). Escalating there would blind the informer for up to a minute when
watches keep being closed while nothing happens, and then miss the first change
by that long. A resync thread calls
``store.resync()`` every ``resync_period`` when ``should_resync`` agrees.
``run`` returns promptly once ``stop_event`` is set: the open watch is closed
from a helper thread so a blocked read wakes up.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from typing import Any

from tf_operator.k8s.client.errors import (
    ApiError,
    TransportError,
    from_status,
    is_resource_expired,
)
from tf_operator.k8s.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

MIN_WATCH_TIMEOUT = 300.0  # seconds; client-go's minWatchTimeout (5 minutes)
DEFAULT_PAGE_SIZE = 500  # client-go's pager default
# Paged lists begun again after their continue token expired, before one list in one go.
PAGED_LIST_ATTEMPTS = 3
# A watch that ends this fast with no events is throttled by SHORT_WATCH_DELAY.
_SHORT_WATCH = 1.0
SHORT_WATCH_DELAY = 1.0  # seconds; v0.5.3 client-go's fixed reflector period


class Backoff:
    """Exponential backoff with jitter: initial, x2 each step, capped; reset on success."""

    def __init__(
        self,
        initial: float = 0.8,
        maximum: float = 30.0,
        jitter: float = 1.0,
        rng: random.Random | None = None,
    ) -> None:
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
        self._rng = rng or random.Random()
        self._current = initial

    def next(self) -> float:
        delay = self._current * (1.0 + self.jitter * self._rng.random())
        self._current = min(self._current * 2, self.maximum)
        return min(delay, self.maximum * (1.0 + self.jitter))

    def reset(self) -> None:
        self._current = self.initial


_OBJECT_EVENTS = frozenset(("ADDED", "MODIFIED", "DELETED"))


class _ContinueExpired(Exception):
    """A paged list's continue token expired (410) before its last page."""


class Reflector:
    """Mirror one ListWatch into a store (normally a DeltaFIFO)."""

    def __init__(
        self,
        lister_watcher: Any,
        store: Any,
        name: str = "",
        resync_period: float = 0.0,
        should_resync: Any = None,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        page_size: int = DEFAULT_PAGE_SIZE,
        allow_bookmarks: bool = False,
        expected_kind: str | None = None,
        expected_api_version: str | None = None,
        clock: Clock | None = None,
        backoff: Backoff | None = None,
        rng: random.Random | None = None,
        short_watch_delay: float = SHORT_WATCH_DELAY,
        transform: Callable[[Any], Any] | None = None,
    ) -> None:
        self.lister_watcher = lister_watcher
        self.store = store
        self.name = name or repr(lister_watcher)
        self.resync_period = resync_period
        self.should_resync = should_resync
        self.min_watch_timeout = min_watch_timeout
        self.page_size = page_size
        self.allow_bookmarks = allow_bookmarks
        self.expected_kind = expected_kind
        self.expected_api_version = expected_api_version
        self.clock = clock or REAL_CLOCK
        self.backoff = backoff or Backoff()
        self.short_watch_delay = short_watch_delay
        self.transform = transform
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._last_sync_rv = ""
        self._rv_unavailable = False
        self._current_watch: Any = None
        self.list_count = 0  # how many full lists were made (observability, tests)
        self.watch_count = 0

    # ---- public -------------------------------------------------------------------
    def last_sync_resource_version(self) -> str:
        with self._lock:
            return self._last_sync_rv

    def run(self, stop_event: threading.Event, on_stop: Callable[[], None] | None = None) -> None:
        """List and watch until ``stop_event`` is set; ``on_stop`` runs once it is (from the
        thread that closes the open watch)."""
        closer = threading.Thread(
            target=self._close_on_stop,
            args=(stop_event, on_stop),
            name=f"reflector-stop {self.name}",
            daemon=True,
        )
        closer.start()
        resyncer = None
        if self.resync_period > 0:
            resyncer = threading.Thread(
                target=self._resync_loop,
                args=(stop_event,),
                name=f"resync {self.name}",
                daemon=True,
            )
            resyncer.start()
        log.debug("reflector %s starting", self.name)
        while not stop_event.is_set():
            try:
                self._list()
            except Exception as exc:  # noqa: BLE001 - any failure means: back off, relist
                log.warning("reflector %s: list failed: %s", self.name, exc)
                stop_event.wait(self.backoff.next())
                continue
            self.backoff.reset()
            try:
                self._watch_until_relist(stop_event)
            except Exception:  # noqa: BLE001 - as client-go restarts ListAndWatch: relist
                log.exception("reflector %s: watch failed unexpectedly; relisting", self.name)
                stop_event.wait(self.backoff.next())
        log.debug("reflector %s stopped", self.name)

    # ---- list -------------------------------------------------------------------------
    def _relist_resource_version(self) -> str:
        with self._lock:
            if self._rv_unavailable:
                return ""
            return self._last_sync_rv or "0"

    def _list(self) -> None:
        rv = self._relist_resource_version()
        try:
            items, list_rv = self._list_at(rv)
        except ApiError as exc:
            if not is_resource_expired(exc) or rv == "":
                raise
            log.info("reflector %s: resourceVersion %s expired; relisting", self.name, rv)
            with self._lock:
                self._rv_unavailable = True
            items, list_rv = self._list_at("")
        self.store.replace(items, list_rv)
        with self._lock:
            self._last_sync_rv = list_rv
            self._rv_unavailable = False
        self.list_count += 1
        log.debug("reflector %s: listed %d objects at %s", self.name, len(items), list_rv)

    def _list_at(self, rv: str) -> tuple[list[dict[str, Any]], str]:
        if not self.page_size:
            result = self.lister_watcher.list(resource_version=rv or None)
            return self._take(result), _list_rv(result)
        for _ in range(PAGED_LIST_ATTEMPTS):
            try:
                return self._list_pages(rv)
            except _ContinueExpired:
                # The snapshot the pages read was compacted away (writes outran the list):
                # start again from the latest state, still a page at a time.
                log.info("reflector %s: continue token expired; listing again", self.name)
                rv = ""
        log.info("reflector %s: continue tokens keep expiring; listing in one go", self.name)
        result = self.lister_watcher.list(resource_version=None)
        return self._take(result), _list_rv(result)

    def _list_pages(self, rv: str) -> tuple[list[dict[str, Any]], str]:
        """One paged list (as client-go's pager; resourceVersion "0" too: the server may
        ignore the limit there and answer in one go from its cache)."""
        items: list[dict[str, Any]] = []
        result = self.lister_watcher.list(resource_version=rv or None, limit=self.page_size)
        while True:
            items += self._take(result)
            token = (result.get("metadata") or {}).get("continue")
            if not token:
                return items, _list_rv(result)
            try:
                result = self.lister_watcher.list(limit=self.page_size, continue_token=token)
            except ApiError as exc:
                if not is_resource_expired(exc):
                    raise
                raise _ContinueExpired from exc

    def _take(self, result: dict[str, Any]) -> list[dict[str, Any]]:
        """A list answer's items, typed and transformed as they arrive: a page at a time, a
        large relist never holds every object whole."""
        items: list[dict[str, Any]] = result.get("items") or []
        self._fill_type(items)
        if self.transform is not None:
            items = [self.transform(item) for item in items]
        return items

    def _fill_type(self, items: list[dict[str, Any]]) -> None:
        # List items come without kind/apiVersion; watch events carry them. Make the
        # cache uniform so consumers never see the difference.
        if not self.expected_kind:
            return
        kind, api_version = self.expected_kind, self.expected_api_version
        for item in items:
            if "kind" not in item:
                item["kind"] = kind
            if api_version and "apiVersion" not in item:
                item["apiVersion"] = api_version

    # ---- watch ---------------------------------------------------------------------
    def _watch_until_relist(self, stop_event: threading.Event) -> None:
        """Watch (and rewatch) from the last resourceVersion until a relist is due."""
        while not stop_event.is_set():
            timeout = int(self.min_watch_timeout * (1.0 + self._rng.random()))
            rv = self.last_sync_resource_version()
            try:
                stream = self.lister_watcher.watch(
                    resource_version=rv,
                    timeout_seconds=max(1, timeout),
                    allow_bookmarks=self.allow_bookmarks,
                )
            except TransportError as exc:
                log.warning("reflector %s: watch failed to start: %s", self.name, exc)
                stop_event.wait(self.backoff.next())
                continue  # the server is likely unreachable: rewatch, do not relist
            except ApiError as exc:
                if is_resource_expired(exc):
                    log.info("reflector %s: watch from %s: %s; relisting", self.name, rv, exc)
                    with self._lock:
                        self._rv_unavailable = True
                    return
                log.warning("reflector %s: watch failed: %s; relisting", self.name, exc)
                stop_event.wait(self.backoff.next())
                return
            self.watch_count += 1
            with self._lock:
                self._current_watch = stream
            if stop_event.is_set():
                stream.close()
                return
            started = self.clock.monotonic()
            try:
                outcome, events = self._handle_watch(stream, stop_event)
            except (TransportError, ValueError) as exc:
                log.info("reflector %s: watch broke: %s; rewatching", self.name, exc)
                stop_event.wait(self.backoff.next())
                continue
            finally:
                with self._lock:
                    self._current_watch = None
                stream.close()
            if outcome == "expired":
                with self._lock:
                    self._rv_unavailable = True
                return
            if outcome == "error":
                stop_event.wait(self.backoff.next())
                return
            if events:
                self.backoff.reset()
            elif self.clock.monotonic() - started < _SHORT_WATCH:
                log.debug("reflector %s: very short watch with no events", self.name)
                stop_event.wait(self.short_watch_delay)

    def _handle_watch(self, stream: Any, stop_event: threading.Event) -> tuple[str, int]:
        events = 0
        for event_type, obj in stream:
            if stop_event.is_set():
                return "stopped", events
            if event_type == "ERROR":
                err = from_status(obj if isinstance(obj, dict) else {})
                if is_resource_expired(err):
                    log.info("reflector %s: watch: %s; relisting", self.name, err)
                    return "expired", events
                log.warning("reflector %s: watch error event: %s", self.name, err)
                return "error", events
            rv = ((obj or {}).get("metadata") or {}).get("resourceVersion")
            if event_type == "BOOKMARK":
                if rv:
                    self._set_rv(rv)
                continue
            if self.transform is not None and event_type in _OBJECT_EVENTS:
                obj = self.transform(obj)
            if event_type == "ADDED":
                self.store.add(obj)
            elif event_type == "MODIFIED":
                self.store.update(obj)
            elif event_type == "DELETED":
                self.store.delete(obj)
            else:
                log.warning("reflector %s: unknown watch event type %r", self.name, event_type)
                continue
            events += 1
            if rv:
                self._set_rv(rv)
        return "ended", events

    def _set_rv(self, rv: str) -> None:
        with self._lock:
            self._last_sync_rv = rv

    # ---- helpers -------------------------------------------------------------------
    def _close_on_stop(
        self, stop_event: threading.Event, on_stop: Callable[[], None] | None
    ) -> None:
        stop_event.wait()
        with self._lock:
            stream = self._current_watch
        if stream is not None:
            stream.close()
        if on_stop is not None:
            on_stop()

    def _resync_loop(self, stop_event: threading.Event) -> None:
        while not self.clock.wait(stop_event, self.resync_period):
            try:
                if self.should_resync is None or self.should_resync():
                    self.store.resync()
            except Exception:  # noqa: BLE001 - keep resyncing
                log.exception("reflector %s: resync failed", self.name)


def _list_rv(result: dict[str, Any]) -> str:
    return str((result.get("metadata") or {}).get("resourceVersion") or "")
