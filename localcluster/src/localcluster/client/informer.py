"""A tiny informer over a ``ClusterClient``: list, then watch, relist on trouble.

Every local-cluster component (scheduler, kubelets, endpoints controller, DNS)
uses this instead of the operator's client-go port, which the local cluster must
not import. It keeps a store keyed by ``namespace/name`` and calls one handler
with ``(event_type, new_or_last_obj, old_obj_or_None)`` from its own thread, so a
handler never runs concurrently with itself. After a relist it emits the
difference (ADDED/MODIFIED/DELETED) so handlers need no special resync path.

Objects are listed and watched with ``shared=True``: in process they are the registry's stored
objects themselves, never copied (over HTTP every object is freshly decoded anyway), and every
component of the cluster shares them, as the controllers of one kube-controller-manager share their informers'
cache. Handlers and readers must not mutate them (copy first, as a client-go controller
calls ``DeepCopy``); a test run with ``LOCALCLUSTER_CHECK_SHARED=1`` fails any write that
finds a stored object changed behind the registry's back (``Store``). Copying each object for
each of the half-dozen pod informers cost more CPU than the API requests that made them.

``sync()`` is a barrier: it applies, on the caller's thread, every event committed before the
call (in process the registry queues events into watches while committing; over HTTP it applies
what has arrived, see ``WatchStream``), so a component driven step
by step (the batch scheduler's ``run_once``) sees exactly what a test wrote. Events are popped
and handled under one consume lock, so handlers still never run concurrently or out of order;
a handler must not call ``sync`` itself. A resource that does not exist (a CRD not installed
yet) is treated as empty and retried every ``MISSING_RETRY_SECONDS`` without noise.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from localcluster.apimachinery.gvr import GVR
from localcluster.client.api import ClusterClient, WatchStream

logger = logging.getLogger(__name__)

Handler = Callable[[str, dict[str, Any], dict[str, Any] | None], None]

PODS: GVR = ("", "v1", "pods")
NODES: GVR = ("", "v1", "nodes")
SERVICES: GVR = ("", "v1", "services")
ENDPOINTS: GVR = ("", "v1", "endpoints")
NAMESPACES: GVR = ("", "v1", "namespaces")
LEASES: GVR = ("coordination.k8s.io", "v1", "leases")

_POLL_SECONDS = 0.2
_RELIST_BACKOFF_SECONDS = 0.5
# A resource whose type is not registered (404 on list) is looked for again this often.
MISSING_RETRY_SECONDS = 5.0


def start_informers(
    informers: tuple[Informer, ...], stop_event: threading.Event, timeout: float = 30
) -> list[threading.Thread]:
    """Start every informer, then wait (up to ``timeout`` each) until each has listed."""
    threads = [informer.start(stop_event) for informer in informers]
    for informer in informers:
        informer.wait_for_sync(timeout)
    return threads


def object_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


class Informer:
    """Mirror of one resource (optionally filtered) that calls ``handler`` on each change."""

    def __init__(
        self,
        client: ClusterClient,
        gvr: GVR,
        handler: Handler,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> None:
        self._client = client
        self._gvr = gvr
        self._handler = handler
        self._namespace = namespace
        self._label_selector = label_selector
        self._field_selector = field_selector
        self._lock = threading.Lock()
        self._store: dict[str, dict[str, Any]] = {}
        self._by_namespace: dict[str, dict[str, dict[str, Any]]] = {}
        self._synced = threading.Event()
        self._thread: threading.Thread | None = None
        self._consume = threading.Lock()  # held while popping and handling events
        self._watch: WatchStream | None = None  # the live watch, set and cleared under _consume
        self._missing = False  # the resource type does not exist (yet)

    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self._store.get(key)

    def items(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._store.values())

    def in_namespace(self, namespace: str) -> list[dict[str, Any]]:
        """Objects of one namespace, without scanning the others."""
        with self._lock:
            return list(self._by_namespace.get(namespace, {}).values())

    def _index(self, key: str, obj: dict[str, Any] | None, old: dict[str, Any] | None) -> None:
        """Keep the namespace index in step with the store (lock held)."""
        source = obj if obj is not None else old
        namespace = ((source or {}).get("metadata") or {}).get("namespace") or ""
        bucket = self._by_namespace.setdefault(namespace, {})
        if obj is None:
            bucket.pop(key, None)
        else:
            bucket[key] = obj

    def start(self, stop_event: threading.Event) -> threading.Thread:
        name = f"informer-{self._gvr[2]}"
        self._thread = threading.Thread(target=self.run, args=(stop_event,), name=name, daemon=True)
        self._thread.start()
        return self._thread

    def run(self, stop_event: threading.Event) -> None:
        while not stop_event.is_set():
            try:
                self._list_and_watch(stop_event)
            except Exception as err:  # noqa: BLE001 - any failure means relist, as a reflector would
                if stop_event.is_set():
                    return
                code = getattr(err, "code", None)
                if code == 404:
                    self._mark_missing()
                    stop_event.wait(MISSING_RETRY_SECONDS)
                    continue
                if code == 410:  # fell behind the compacted history: a relist, as client-go
                    logger.warning("watch of %s: %s; relisting", self._gvr[2], err)
                else:
                    logger.exception("informer for %s failed; relisting", self._gvr[2])
                stop_event.wait(_RELIST_BACKOFF_SECONDS)

    def _mark_missing(self) -> None:
        logger.debug("%s not served (yet); treating it as empty", self._gvr[2])
        with self._consume:
            self._missing = True
            self._replace([])
        self._synced.set()

    def sync(self, timeout: float = 10.0) -> bool:
        """Handle every event committed before this call, on this thread (see module docstring).

        False when no watch could be used within ``timeout`` (informer not started or relisting).
        """
        deadline = time.monotonic() + timeout
        if not self._synced.wait(timeout):
            return False
        while True:
            with self._consume:
                watch = self._watch
                if watch is not None and not watch.closed and self._drain(watch):
                    return True
                if watch is None and self._missing:
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)  # the informer thread is relisting; poll until it has a watch

    def _list_and_watch(self, stop_event: threading.Event) -> None:
        with self._consume:
            page = self._client.list(
                self._gvr,
                self._namespace,
                label_selector=self._label_selector,
                field_selector=self._field_selector,
                shared=True,
            )
            self._missing = False
            self._replace(page.items)
            watch = self._client.watch(
                self._gvr,
                self._namespace,
                resource_version=page.resource_version,
                label_selector=self._label_selector,
                field_selector=self._field_selector,
            )
            self._watch = watch
        self._synced.set()
        try:
            while not stop_event.is_set():
                if not watch.wait(_POLL_SECONDS):
                    continue
                with self._consume:
                    healthy = self._drain(watch)
                if not healthy or (watch.closed and not watch.pending()):
                    logger.info("watch of %s closed; relisting", self._gvr[2])
                    return
        finally:
            with self._consume:
                self._watch = None
            watch.stop()

    def _drain(self, watch: WatchStream) -> bool:
        """Handle every queued event (``_consume`` held); False when the watch must be replaced."""
        while True:
            event = watch.get_shared(0)
            if event is None:
                return not watch.closed
            event_type, obj = event
            if event_type not in ("ADDED", "MODIFIED", "DELETED"):
                logger.info("watch of %s ended with %s; relisting", self._gvr[2], event_type)
                watch.close(f"ended with {event_type}")
                return False
            self._apply(event_type, obj)

    def _apply(self, event_type: str, obj: dict[str, Any]) -> None:
        key = object_key(obj)
        with self._lock:
            old = self._store.get(key)
            if event_type == "DELETED":
                self._store.pop(key, None)
                self._index(key, None, obj)
            else:
                self._store[key] = obj
                self._index(key, obj, old)
        if event_type != "DELETED":
            event_type = "ADDED" if old is None else "MODIFIED"
        self._dispatch(event_type, obj, old)

    def _replace(self, items: list[dict[str, Any]]) -> None:
        fresh = {object_key(o): o for o in items}
        with self._lock:
            previous, self._store = self._store, dict(fresh)
            self._by_namespace = {}
            for key, obj in fresh.items():
                self._index(key, obj, None)
        for key, old in previous.items():
            if key not in fresh:
                self._dispatch("DELETED", old, old)
        for key, obj in fresh.items():
            before = previous.get(key)
            if before is None:
                self._dispatch("ADDED", obj, None)
            elif _rv(before) != _rv(obj):
                self._dispatch("MODIFIED", obj, before)

    def _dispatch(self, event_type: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        try:
            self._handler(event_type, obj, old)
        except Exception:  # noqa: BLE001 - a handler bug must not stop the informer
            logger.exception("handler for %s %s failed", self._gvr[2], object_key(obj))


def _rv(obj: dict[str, Any]) -> str | None:
    return (obj.get("metadata") or {}).get("resourceVersion")
