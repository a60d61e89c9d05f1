"""Following a job's logs through container restarts and pod recreations.

A container's log request with ``follow=true`` ends when that container exits, but a replica
lives on: restarted in place (restartPolicy OnFailure, Always) or recreated under its name
(ExitCode). :class:`JobLogFollower` streams the current run of each selected replica and, as a
watch on the job's pods shows a new run start (a new pod UID, or a higher ``restartCount`` of
the container), streams that one too, announcing it with a ``--- <pod>: ... ---`` line as the
dashboard does. It ends once the job is finished (or gone) and every stream has ended. The
streams' lines and the watches' objects meet on one queue, read by the caller's thread.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from tf_operator.k8s.client import ResourceInterface, WatchInterface
from tf_operator.k8s.client.errors import ApiError, from_status, is_resource_expired
from tf_operator.sdk.conditions import is_finished
from tf_operator.sdk.logs import LogLine, LogStream

log = logging.getLogger(__name__)

# A watch asks the server to end it after this long and is then resumed.
WATCH_SECONDS = 300
RunKey = tuple[str, int]  # (pod uid, restart count of the container)
OpenStream = Callable[[str, str, int | None], LogStream]  # (pod, container, tail) -> stream


def run_key(pod: Mapping[str, Any], container: str) -> RunKey | None:
    """Which run of ``container`` the pod shows, if it has started (running or ended)."""
    uid = str((pod.get("metadata") or {}).get("uid", ""))
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") != container:
            continue
        state = status.get("state") or {}
        if "running" in state or "terminated" in state:
            return uid, int(status.get("restartCount") or 0)
        return None
    return None


class JobLogFollower:
    """Lines of the selected replicas' every run, until the job is done (module docstring)."""

    def __init__(
        self,
        open_stream: OpenStream,
        pods: ResourceInterface,
        jobs: ResourceInterface,
        namespace: str,
        job: str,
        pod_names: list[str],
        pod_selector: str,
        container: str,
        tail_lines: int | None = None,
    ) -> None:
        self._open = open_stream
        self._pods = pods
        self._jobs = jobs
        self._namespace = namespace
        self._job = job
        self._wanted = set(pod_names)
        self._selector = pod_selector
        self._container = container
        self._tail = tail_lines
        self._events: queue.Queue[Any] = queue.Queue(maxsize=4096)
        self._stop = threading.Event()
        self._runs: dict[str, RunKey] = {}
        self._streams: set[LogStream] = set()
        self._watches: set[WatchInterface] = set()
        self._lock = threading.Lock()

    def lines(self) -> Iterator[LogLine]:
        finished = listed = False  # the job is done; the pods' first list was handed over
        try:
            self._watch(self._pods, self._selector, None, "pod")
            self._watch(self._jobs, None, f"metadata.name={self._job}", "job")
            while True:
                kind, item = self._events.get()
                if kind == "line":
                    yield item
                    continue
                if kind == "ended":
                    self._streams.discard(item)
                elif kind == "pod":
                    marker = self._start(item)
                    if marker is not None:
                        yield marker
                elif kind == "job":
                    finished = item is None or is_finished(item)
                elif kind == "listed":
                    listed = True
                if finished and listed and not self._streams:
                    return
        finally:
            self._stop.set()
            with self._lock:
                watches, self._watches = set(self._watches), set()
            for watch in watches:
                watch.close()
            for stream in list(self._streams):
                stream.close()

    def _start(self, pod: Mapping[str, Any]) -> LogLine | None:
        """Stream the pod's current run unless it is streamed already; the marker line of a
        run after the first."""
        meta = pod.get("metadata") or {}
        name = str(meta.get("name", ""))
        key = run_key(pod, self._container)
        if name not in self._wanted or key is None or self._runs.get(name) == key:
            return None
        previous = self._runs.get(name)
        self._runs[name] = key
        stream = self._open(name, self._container, self._tail if previous is None else None)
        self._streams.add(stream)
        threading.Thread(
            target=self._pump, args=(stream,), name=f"logs {name}", daemon=True
        ).start()
        if previous is None:
            return None
        what = (
            "pod recreated" if previous[0] != key[0] else f"container restarted (run {key[1] + 1})"
        )
        return LogLine(name, f"--- {name}: {what} ---")

    def _pump(self, stream: LogStream) -> None:
        try:
            for line in stream:
                self._put("line", LogLine(stream.pod, line))
        except ApiError as err:
            log.warning("%s", err)
        finally:
            self._put("ended", stream)

    def _put(self, kind: str, item: Any) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(queue.Full):
                self._events.put((kind, item), timeout=0.1)
                return

    def _watch(
        self, resource: ResourceInterface, labels: str | None, fields: str | None, kind: str
    ) -> None:
        """List, then watch from there (relisting after 410), handing each object on."""

        def run() -> None:
            version: str | None = None
            while not self._stop.is_set():
                try:
                    if version is None:
                        listed = resource.list(
                            self._namespace, label_selector=labels, field_selector=fields
                        )
                        items = listed.get("items") or []
                        if kind == "job" and not items:
                            self._put("job", None)  # gone
                        for obj in items:
                            self._put(kind, obj)
                        if kind == "pod":
                            self._put("listed", None)
                        version = (listed.get("metadata") or {}).get("resourceVersion")
                    version = self._follow_watch(resource, labels, fields, kind, version)
                except ApiError as err:
                    if self._stop.is_set():
                        return
                    if not is_resource_expired(err):
                        log.warning("watching %ss of %s: %s", kind, self._job, err)
                        self._stop.wait(1.0)
                    version = None

        threading.Thread(target=run, name=f"logs watch {kind}", daemon=True).start()

    def _follow_watch(
        self,
        resource: ResourceInterface,
        labels: str | None,
        fields: str | None,
        kind: str,
        version: str | None,
    ) -> str | None:
        watch = resource.watch(
            self._namespace,
            resource_version=version,
            timeout_seconds=WATCH_SECONDS,
            label_selector=labels,
            field_selector=fields,
        )
        with self._lock:
            if self._stop.is_set():
                watch.close()
                return version
            self._watches.add(watch)
        try:
            for event_type, obj in watch:
                if event_type == "ERROR":
                    raise from_status(obj)
                if event_type == "BOOKMARK":
                    continue
                version = (obj.get("metadata") or {}).get("resourceVersion") or version
                if event_type == "DELETED":
                    if kind == "job":
                        self._put("job", None)
                    continue
                self._put(kind, obj)
        finally:
            with self._lock:
                self._watches.discard(watch)
            watch.close()
        return version
