"""The two streaming replies: watches (chunked NDJSON) and ``pods/{name}/log?follow=true``.

A watch stream writes one JSON event per line. Events are serialised once per event and shape
(cached on the ``Event``) however many watches carry them; under load a stream writes at most
one batch per ``WATCH_BATCH_INTERVAL``, so fifty watches cost fifty writes per batch rather than
per event. ``BOOKMARK`` events are sent only when the client asked (``allowWatchBookmarks``); an
RV that has left the history gets one ``ERROR`` event carrying the 410 ``Expired`` Status.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

import orjson

from localcluster.apimachinery import deepjson, errors
from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.objects import meta
from localcluster.controlplane.emulated.registry import Registry
from localcluster.controlplane.emulated.resources import ResourceType
from localcluster.controlplane.emulated.serving import tables
from localcluster.controlplane.emulated.serving.httpcore import ClientGone, Request, Responder
from localcluster.controlplane.emulated.serving.params import as_bool, as_int
from localcluster.controlplane.emulated.storage.watch import Event, Watch

MAX_WATCH_SECONDS = 1800  # cap for watches that ask for no timeout
WATCH_BATCH_INTERVAL = 0.02  # minimum spacing of writes on one watch stream under load
MAX_BATCH = 1000

LogProvider = Callable[..., Iterator[bytes]]


def dumps(obj: Any) -> bytes:
    """Compact JSON, non-ASCII text as UTF-8 (as Go writes it); the standard library for what
    orjson does not take (integers beyond 64 bits, keys that are not strings, more than 254
    levels), and an encoder without recursion for what is too deep for the standard library
    too (kube-apiserver stores objects nested 10,000 levels)."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        try:
            return json.dumps(obj, separators=(",", ":")).encode()
        except RecursionError:
            return deepjson.dumps(obj)


class WatchStream:
    """Serves one watch request on its connection's thread until timeout, close or shutdown."""

    def __init__(
        self, registry: Registry, stopping: threading.Event, bookmark_interval: float
    ) -> None:
        self._registry = registry
        self._stopping = stopping
        self._bookmark_interval = bookmark_interval

    def serve(
        self,
        req: Request,
        resp: Responder,
        rt: ResourceType,
        gvr: tuple[Any, ...],
        namespace: str | None,
    ) -> None:
        q = req.query
        timeout = as_int(q.get("timeoutSeconds"), "timeoutSeconds")
        bookmarks = as_bool(q.get("allowWatchBookmarks"))
        as_table = tables.wants_table(req.header("accept"))
        # "watch-list": initial ADDED events, then a bookmark marking their end
        send_initial = as_bool(q.get("sendInitialEvents")) and bookmarks
        try:
            w = self._registry.watch(
                gvr,
                namespace,
                None if send_initial else q.get("resourceVersion") or None,
                q.get("labelSelector"),
                q.get("fieldSelector"),
            )
        except StatusError as e:
            if e.code != 410:
                raise
            resp.start_stream()
            resp.chunk(dumps({"type": "ERROR", "object": e.status}) + b"\n")
            resp.end_stream()
            return
        stream = _Stream(self, resp, rt, gvr[1], w, as_table, bookmarks)
        stream.deadline = time.monotonic() + (
            timeout if timeout and timeout > 0 else MAX_WATCH_SECONDS
        )
        stream.initial_left = w.initial_count if send_initial else -1
        try:
            resp.start_stream(
                content_type=tables.TABLE_CONTENT_TYPE if as_table else "application/json"
            )
            stream.run(self._stopping)
        except ClientGone:
            pass
        finally:
            w.stop()
        resp.end_stream()

    def _initial_end(self, rt: ResourceType, api_version: str, rv: int) -> bytes:
        obj = {
            "kind": rt.kind,
            "apiVersion": api_version,
            "metadata": {
                "resourceVersion": str(rv),
                "annotations": {"k8s.io/initial-events-end": "true"},
            },
        }
        return dumps({"type": "BOOKMARK", "object": obj}) + b"\n"

    def _encode(
        self, rt: ResourceType, version: str, etype: str, ev: Event, as_table: bool
    ) -> bytes:
        key = (etype, version, as_table)
        data = ev.cache.get(key)
        if data is None:
            obj = self._registry.store.present(rt, version, ev.obj)
            if as_table:
                obj = tables.table(
                    rt, version, [obj], {"resourceVersion": meta(obj).get("resourceVersion", "")}
                )
            data = dumps({"type": etype, "object": obj}) + b"\n"
            ev.cache[key] = data
        return data


class _Stream:
    """The state of one watch reply while it runs: deadline, bookmark timer, batching, and how
    many initial events are still to come before the initial-events-end bookmark (-1: none)."""

    def __init__(
        self,
        owner: WatchStream,
        resp: Responder,
        rt: ResourceType,
        version: str,
        w: Watch,
        as_table: bool,
        bookmarks: bool,
    ) -> None:
        self.owner, self.resp, self.rt, self.version, self.w = owner, resp, rt, version, w
        self.as_table, self.bookmarks = as_table, bookmarks
        self.api_version = rt.api_version(version)
        self.deadline = 0.0
        self.next_bookmark = time.monotonic() + owner._bookmark_interval
        self.last_send = 0.0
        self.initial_left = -1

    def run(self, stopping: threading.Event) -> None:
        """Write events until the deadline, the watch closes, the client goes, or shutdown."""
        while not stopping.is_set():
            # Under load, pause *before* waiting: one wake-up and one write per batch.
            pause = self.last_send + WATCH_BATCH_INTERVAL - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            now = time.monotonic()
            if now >= self.deadline:
                return
            item = self.w.next_event(self._wait_seconds(now))
            if item is not None:
                self._send_batch(item)
                continue
            if self.initial_left == 0:  # there were no initial events at all
                self.initial_left = -1
                self.resp.chunk(self._initial_end())
            if self.w.closed:
                return
            if self.bookmarks and time.monotonic() >= self.next_bookmark:
                self._send_bookmark()
            elif self.resp.client_gone():
                return

    def _wait_seconds(self, now: float) -> float:
        wait = min(1.0, self.deadline - now)
        if self.bookmarks:
            wait = min(wait, max(0.01, self.next_bookmark - now))
        return wait

    def _send_batch(self, first: tuple[str, Event]) -> None:
        self.last_send = time.monotonic()
        batch = [first]
        while len(batch) < MAX_BATCH and (more := self.w.next_event(0)) is not None:
            batch.append(more)
        out = []
        for etype, ev in batch:
            out.append(self.owner._encode(self.rt, self.version, etype, ev, self.as_table))
            self.initial_left -= 1
            if self.initial_left == 0:
                out.append(self._initial_end())
                self.initial_left = -1
        self.resp.chunk(b"".join(out))

    def _send_bookmark(self) -> None:
        self.next_bookmark = time.monotonic() + self.owner._bookmark_interval
        rv = self.owner._registry.bookmark_rv(self.w)
        if rv is not None:
            obj = {
                "kind": self.rt.kind,
                "apiVersion": self.api_version,
                "metadata": {"resourceVersion": str(rv)},
            }
            self.resp.chunk(dumps({"type": "BOOKMARK", "object": obj}) + b"\n")

    def _initial_end(self) -> bytes:
        return self.owner._initial_end(self.rt, self.api_version, self.w.start_rv)


def _default_container(pod: dict[str, Any], name: str) -> str:
    annotated = (meta(pod).get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
    if annotated:
        return cast(str, annotated)
    names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
    if len(names) == 1:
        return cast(str, names[0])
    raise errors.bad_request(
        f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
    )


def serve_pod_log(
    registry: Registry,
    provider: LogProvider | None,
    stopping: threading.Event,
    req: Request,
    resp: Responder,
    namespace: str,
    name: str,
) -> None:
    """``GET pods/{name}/log``: text/plain, streamed chunked with ``follow=true``."""
    if req.method != "GET":
        raise errors.method_not_allowed()
    pod = registry.get_shared(("", "v1", "pods"), namespace, name)
    q = req.query
    container = _log_container(pod, name, q.get("container"))
    follow = as_bool(q.get("follow"))
    tail = as_int(q.get("tailLines"), "tailLines")
    limit = as_int(q.get("limitBytes"), "limitBytes")
    stop = threading.Event()
    chunks: Iterator[bytes] = iter(())
    if provider is not None:
        chunks = provider(
            namespace,
            name,
            container,
            follow,
            tail,
            limit,
            as_bool(q.get("timestamps")),
            as_bool(q.get("previous")),
            stop,
        )
    if not follow:
        try:
            data = b"".join(chunks)
        finally:
            stop.set()
        resp.send(200, data[:limit] if limit else data, "text/plain")
        return
    try:
        resp.start_stream(content_type="text/plain")
        _stream_log(resp, chunks, limit, stopping)
    except ClientGone:
        pass
    finally:
        stop.set()
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    resp.end_stream()


def _log_container(pod: dict[str, Any], name: str, requested: str | None) -> str:
    """The container whose log is asked for; 400 when it is not one of the pod's."""
    container = requested or _default_container(pod, name)
    spec = pod.get("spec") or {}
    names = [
        c.get("name") for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
    ]
    if container not in names:
        raise errors.bad_request(f"container {container} is not valid for pod {name}")
    return container


def _stream_log(
    resp: Responder, chunks: Iterator[bytes], limit: int | None, stopping: threading.Event
) -> None:
    """Write ``chunks`` as they come, up to ``limit`` bytes, until the server stops."""
    sent = 0
    for chunk in chunks:
        if stopping.is_set():
            return
        if limit is not None:
            chunk = chunk[: max(0, limit - sent)]
        resp.chunk(chunk)
        sent += len(chunk)
        if limit is not None and sent >= limit:
            return
