"""Recording core/v1 Events without blocking the caller (client-go `tools/record`).

An `EventRecorder` (one per component) builds the Event dict and offers it to every
watcher of its `EventBroadcaster`. Each watcher owns a queue and daemon thread(s) that feed
its handler, so `event()` never waits on the API server. The queue is unbounded by default:
an event is never dropped (v0.5.3's broadcaster dropped events once 1000 were waiting,
divergence D44); a bound (`max_queued_events`) makes a full queue drop with a log line
(thinned out during a flood).

Go's recorder writes from a single goroutine; the recording watcher here runs up to
`DEFAULT_SINK_WORKERS` threads (two: in a 200-job burst the last event is written 0.4 s after
the last job succeeds, as with eight, and each thread more costs wake-ups and GIL hand-overs:
docs/perf-diagnosis.md, stage 3), the second started only when events wait. Its queue
(`keyed_queue`) hands out the events of one involved object one at a time and in order: a repeat
is correlated only after the write of its predecessor has been learnt, so it still becomes a
PATCH of the same Event, and the aggregation and spam filter see each object's events in the
order they were recorded.

The broadcaster made with a client logs each event from the recording threads, just before
writing it: one queue and one hand-off per event. v0.5.3 (`StartLogging(log.Infof)`) logged
every event at INFO; here Warnings are, and Normal events at DEBUG (divergence D53). The line
carries the involved object's `kind` as a structured field (`extra`).

The recording watcher (`start_recording_to_sink`) passes each event through an
`EventCorrelator` (aggregation, de-duplication into count-increasing PATCHes, spam
filter) and writes it to an `EventSink`. A PATCH answered 404 falls back to a create. An
error answer from the server (any HTTP status) is final: the event is abandoned, as
retrying would fail the same way. A transport failure is retried up to
`MAX_TRIES_PER_EVENT` times, `sleep_duration` apart (the first pause randomised so that
many clients do not retry in step), unless the broadcaster is shutting down.

Event names are `<involved object name>.<hex nanoseconds>`; the nanoseconds are made
strictly increasing within the process so that two events never share a name. An Event's name
must be a DNS-1123 subdomain; client-go uses the object's name as is, so an event about an
object whose name is not one (an object the API server should have refused, kept by a server
that did not) was refused too. Here such a name is first turned into one (`event_name_prefix`):
the event about the misnamed object still gets written, and its involvedObject keeps the real
name (divergence D42 in the operator's docs/divergences.md).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Hashable
from datetime import datetime
from functools import partial
from typing import Any, Protocol

from tf_operator.k8s.client import (
    EVENTS,
    ApiError,
    KubeInterface,
    is_already_exists,
    is_not_found,
)
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.record.events_cache import EventCorrelator
from tf_operator.k8s.record.keyed_queue import NOTHING, KeyedQueue

log = logging.getLogger(__name__)

EVENT_TYPE_NORMAL = "Normal"
EVENT_TYPE_WARNING = "Warning"

MAX_TRIES_PER_EVENT = 12
DEFAULT_SLEEP_DURATION = 10.0
# No bound: events are never dropped (divergence D44).
MAX_QUEUED_EVENTS: int | None = None
# Concurrent writers to the API sink. Each holds at most one pooled connection; the
# client's pool (kube.CONNECTION_POOL_MAXSIZE) leaves room for them beside informers,
# workers and leader election.
DEFAULT_SINK_WORKERS = 2

_watcher_ids = itertools.count()

# An Event's name is a DNS-1123 subdomain of at most 253 characters; ours end in "." and at
# most 16 hex digits of nanoseconds.
_DNS_1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_MAX_EVENT_NAME_PREFIX = 253 - 17
_NAME_DIGEST_LENGTH = 8


def format_time(t: datetime) -> str:
    """metav1.Time: RFC 3339 in UTC, whole seconds."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class _NameSuffix:
    """Strictly increasing nanosecond readings, in hex, for unique event names."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def next(self, t: datetime) -> str:
        nanos = int(t.timestamp()) * 1_000_000_000 + t.microsecond * 1000
        with self._lock:
            nanos = max(nanos, self._last + 1)
            self._last = nanos
        return f"{nanos:x}"


_suffix = _NameSuffix()


def event_name_prefix(object_name: str) -> str:
    """The part of an event's name before `.<hex nanoseconds>`: the object's name when that
    makes a valid Event name (always, for objects a real API server accepted), else its
    lower-cased letters and digits joined by "-" plus a digest of the real name, so distinct
    names stay distinct (`UpperCase` -> `uppercase-<8 hex>`, `a b` -> `a-b-<8 hex>`)."""
    if len(object_name) <= _MAX_EVENT_NAME_PREFIX and _DNS_1123_SUBDOMAIN.fullmatch(object_name):
        return object_name
    digest = hashlib.sha256(object_name.encode("utf-8", "surrogatepass")).hexdigest()
    words = re.sub(r"[^a-z0-9]+", "-", object_name.lower()).strip("-")
    keep = _MAX_EVENT_NAME_PREFIX - _NAME_DIGEST_LENGTH - 1
    words = words[:keep].rstrip("-")
    digest = digest[:_NAME_DIGEST_LENGTH]
    return f"{words}-{digest}" if words else digest


def object_reference(obj: dict[str, Any]) -> dict[str, Any]:
    """The ObjectReference of an object dict (or of a reference dict passed as is).

    Fields left empty are omitted, as Go's `omitempty` does.
    """
    if "metadata" in obj:
        meta = obj.get("metadata") or {}
        ref = {
            "kind": obj.get("kind", ""),
            "namespace": meta.get("namespace", ""),
            "name": meta.get("name", ""),
            "uid": meta.get("uid", ""),
            "apiVersion": obj.get("apiVersion", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
    else:  # already an ObjectReference
        keys = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
        ref = {k: obj.get(k, "") for k in keys}
    return {k: v for k, v in ref.items() if v}


class EventSink(Protocol):
    """Where events are written; must respect the event's namespace."""

    def create(self, event: dict[str, Any]) -> dict[str, Any]: ...
    def update(self, event: dict[str, Any]) -> dict[str, Any]: ...
    def patch(self, event: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]: ...


class KubeEventSink:
    """Writes events through a KubeClient (or a test's client): POST, PUT, strategic PATCH."""

    def __init__(self, kube_client: KubeInterface) -> None:
        self._events = kube_client.resource(EVENTS)

    def create(self, event: dict[str, Any]) -> dict[str, Any]:
        return self._events.create(event, namespace=event["metadata"]["namespace"])

    def update(self, event: dict[str, Any]) -> dict[str, Any]:
        return self._events.update(event, namespace=event["metadata"]["namespace"])

    def patch(self, event: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
        meta = event["metadata"]
        return self._events.patch(
            meta["name"], patch, namespace=meta["namespace"], patch_type="strategic"
        )


def _should_log_drop(dropped: int) -> bool:
    # The 1st, 10th, 100th... drop and every 1000th after: a flood stays readable.
    return dropped % 1000 == 0 or dropped in (1, 10, 100)


class EventWatcher:
    """A queue of events and the daemon threads that hand them to a handler.

    With several `workers`, events that share a `key_of(event)` are still handled one at a
    time and in order; events of different keys are handled concurrently. One thread starts
    at once; more (up to `workers`) start only when events wait with no thread free.
    """

    def __init__(
        self,
        handler: Callable[[dict[str, Any]], None],
        max_queued: int | None,
        name: str,
        *,
        workers: int = 1,
        key_of: Callable[[dict[str, Any]], Hashable] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self._handler = handler
        self._max_queued = max_queued
        self._key_of = key_of or (lambda event: None)
        self._queue = KeyedQueue(max_queued)
        self._drop_lock = threading.Lock()
        self.dropped = 0
        self._name = name
        self._workers = workers
        self._threads: list[threading.Thread] = []
        self._threads_lock = threading.Lock()
        self._add_thread()

    def _add_thread(self) -> None:
        """Start one more thread; the first at once, the others when events wait for one."""
        with self._threads_lock:
            if len(self._threads) >= self._workers:
                return
            thread = threading.Thread(
                target=self._loop, name=f"{self._name}-{len(self._threads)}", daemon=True
            )
            self._threads.append(thread)
        thread.start()

    def offer(self, event: dict[str, Any]) -> bool:
        """Queue `event` unless the queue is full or stopped; never blocks."""
        if self._queue.offer(self._key_of(event), event):
            if len(self._threads) < self._workers and self._queue.lacks_consumers():
                self._add_thread()
            return True
        if self._queue.closed:
            return False
        with self._drop_lock:
            self.dropped += 1
            dropped = self.dropped
        if _should_log_drop(dropped):
            log.error(
                "event queue full (%d): dropping event %s %s on %s (%d dropped so far)",
                self._max_queued,
                event.get("type"),
                event.get("reason"),
                (event.get("involvedObject") or {}).get("name"),
                dropped,
            )
        return False

    def stop(self) -> None:
        """Accept no more events; the threads deliver what is queued, then end."""
        self._queue.close()

    def join(self, timeout: float | None = None) -> bool:
        """Wait (at most `timeout` in all) for every thread to end; True when they have."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._threads_lock:
            threads = list(self._threads)
        for thread in threads:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            thread.join(left)
        return not any(thread.is_alive() for thread in threads)

    def pending(self) -> int:
        """Events queued and not yet taken by a thread."""
        return len(self._queue)

    def _loop(self) -> None:
        finished: Hashable = NOTHING
        while True:
            taken = self._queue.take(finished)
            if taken is None:
                return
            finished, event = taken
            try:
                self._handler(event)
            except Exception:
                log.exception("event handler failed")


class EventBroadcaster:
    """Fans events from its recorders out to watchers: the API sink, logs, tests.

    With a `kube_client`, it starts like tf-operator's job controller does: logging each
    event and recording it to the API.
    """

    def __init__(
        self,
        kube_client: Any = None,
        *,
        clock: Clock | None = None,
        max_queued_events: int | None = MAX_QUEUED_EVENTS,
        sleep_duration: float = DEFAULT_SLEEP_DURATION,
    ) -> None:
        self._clock = clock or REAL_CLOCK
        self._max_queued = max_queued_events
        self._sleep_duration = sleep_duration
        self._lock = threading.Lock()
        self._watchers: list[EventWatcher] = []
        self._shutting_down = threading.Event()
        self._random = random.Random()
        if kube_client is not None:
            self.start_recording_to_sink(KubeEventSink(kube_client), log_events=True)

    def start_event_watcher(
        self,
        handler: Callable[[dict[str, Any]], None],
        *,
        workers: int = 1,
        key_of: Callable[[dict[str, Any]], Hashable] | None = None,
    ) -> EventWatcher:
        """Call `handler(event)` for every event, from dedicated thread(s).

        With `workers` > 1, events with equal `key_of(event)` are still handled in order,
        one at a time.
        """
        name = f"event-watcher-{next(_watcher_ids)}"
        watcher = EventWatcher(handler, self._max_queued, name, workers=workers, key_of=key_of)
        with self._lock:
            self._watchers.append(watcher)
        return watcher

    def start_recording_to_sink(
        self, sink: EventSink, workers: int = DEFAULT_SINK_WORKERS, log_events: bool = False
    ) -> EventWatcher:
        """Write every event to `sink`, correlated (aggregated, counted, spam-filtered).

        `workers` threads write concurrently; all events about one involved object go
        through one thread at a time, in order, so a repeat always patches the Event its
        first occurrence created and aggregation sees the object's events in sequence.
        With `log_events` each event is also logged (see `start_logging`) by the thread about
        to write it: a Warning at INFO, a Normal one at DEBUG (the API server keeps it).
        """
        correlator = EventCorrelator(self._clock, self._aggregate_name)

        def record(event: dict[str, Any]) -> None:
            level = logging.INFO if event.get("type") == "Warning" else logging.DEBUG
            if log_events and log.isEnabledFor(level):
                _log_event(partial(log.log, level, extra=_object_fields(event)), event)
            self._record_to_sink(sink, event, correlator)

        return self.start_event_watcher(record, workers=workers, key_of=involved_object_key)

    def start_logging(
        self, logf: Callable[..., None] | None = None, level: int = logging.INFO
    ) -> EventWatcher:
        """Log every event (with `logf(fmt, *args)`, or this module's logger at `level`)."""

        def emit(fmt: str, *args: Any) -> None:
            if logf is not None:
                logf(fmt, *args)
            else:
                log.log(level, fmt, *args)

        return self.start_event_watcher(lambda e: _log_event(emit, e))

    def new_recorder(self, component: str, host: str = "") -> EventRecorder:
        source = {"component": component}
        if host:
            source["host"] = host
        return EventRecorder(self, source, self._clock)

    def shutdown(self, timeout: float | None = 5.0) -> None:
        """Stop accepting events, deliver those queued (no more retry pauses), end threads."""
        self._shutting_down.set()
        with self._lock:
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher.stop()
        deadline = None if timeout is None else time.monotonic() + timeout
        for watcher in watchers:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not watcher.join(left):
                log.warning(
                    "event watcher still busy after shutdown timeout (%d events not delivered)",
                    watcher.pending(),
                )

    def action(self, event: dict[str, Any]) -> None:
        """Offer `event` to every watcher; never blocks."""
        with self._lock:
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher.offer(event)

    def _aggregate_name(self, object_name: str) -> str:
        return f"{event_name_prefix(object_name)}.{_suffix.next(self._clock.now())}"

    def _record_to_sink(
        self, sink: EventSink, event: dict[str, Any], correlator: EventCorrelator
    ) -> None:
        result = correlator.correlate(event)  # never mutated: the correlator copies
        if result.skip or result.event is None:
            log.debug("event %s skipped by the spam filter", result)
            return
        event = result.event
        tries = 0
        while not self._record_event(sink, event, result.patch, correlator):
            tries += 1
            if tries >= MAX_TRIES_PER_EVENT:
                log.error("unable to write event %s (retry limit exceeded)", _describe(event))
                return
            pause = self._sleep_duration
            if tries == 1:
                pause *= self._random.random()
            if self._clock.wait(self._shutting_down, pause):
                log.error("unable to write event %s (shutting down)", _describe(event))
                return

    def _record_event(
        self,
        sink: EventSink,
        event: dict[str, Any],
        patch: dict[str, Any] | None,
        correlator: EventCorrelator,
    ) -> bool:
        """Write the event; True when written or abandoned, False to retry."""
        update_existing = int(event.get("count") or 1) > 1 and patch is not None
        written = None
        err: BaseException | None = None
        if update_existing:
            try:
                written = sink.patch(event, patch or {})
            except Exception as exc:
                err = exc
        if not update_existing or (err is not None and is_not_found(err)):
            event["metadata"].pop("resourceVersion", None)
            try:
                written = sink.create(event)
                err = None
            except Exception as exc:
                err = exc
        if err is None:
            correlator.update_state(written if isinstance(written, dict) else event)
            return True
        if isinstance(err, ApiError) and err.status:
            level = logging.DEBUG if is_already_exists(err) else logging.ERROR
            log.log(level, "server rejected event %s: %s (will not retry)", _describe(event), err)
            return True
        log.error("unable to write event %s: %s (may retry after sleeping)", _describe(event), err)
        return False


def _log_event(logf: Callable[..., None], event: dict[str, Any]) -> None:
    logf(
        "Event(%s): type: '%s' reason: '%s' %s",
        event.get("involvedObject"),
        event.get("type"),
        event.get("reason"),
        event.get("message"),
    )


def _object_fields(event: dict[str, Any]) -> dict[str, Any]:
    """The structured fields of an event's log line: the ``kind`` of the object it is about
    (a job's, so that lines of several kinds' controllers can be told apart)."""
    kind = (event.get("involvedObject") or {}).get("kind")
    return {"kind": kind} if kind else {}


def involved_object_key(event: dict[str, Any]) -> tuple[str, ...]:
    """What serialises an event's delivery: the object it is about."""
    ref = event.get("involvedObject") or {}
    return tuple(ref.get(k, "") for k in ("kind", "namespace", "name", "uid", "apiVersion"))


def _describe(event: dict[str, Any]) -> str:
    meta = event.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')} {event.get('reason')!r}"


class EventRecorder:
    """Records events about objects on behalf of one source component."""

    def __init__(self, broadcaster: EventBroadcaster, source: dict[str, Any], clock: Clock) -> None:
        self._broadcaster = broadcaster
        self._source = source
        self._clock = clock

    def event(self, obj: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        """Record an event about `obj` (an object dict or an ObjectReference dict)."""
        self._generate(obj, None, self._clock.now(), event_type, reason, message)

    def eventf(
        self, obj: dict[str, Any], event_type: str, reason: str, fmt: str, *args: Any
    ) -> None:
        """`event` with `fmt % args` as the message."""
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    def past_eventf(
        self,
        obj: dict[str, Any],
        timestamp: datetime,
        event_type: str,
        reason: str,
        fmt: str,
        *args: Any,
    ) -> None:
        """`eventf` with an explicit timestamp."""
        self._generate(obj, None, timestamp, event_type, reason, fmt % args if args else fmt)

    def annotated_eventf(
        self,
        obj: dict[str, Any],
        annotations: dict[str, str],
        event_type: str,
        reason: str,
        fmt: str,
        *args: Any,
    ) -> None:
        """`eventf` with annotations on the Event object."""
        message = fmt % args if args else fmt
        self._generate(obj, annotations, self._clock.now(), event_type, reason, message)

    def _generate(
        self,
        obj: dict[str, Any],
        annotations: dict[str, str] | None,
        timestamp: datetime,
        event_type: str,
        reason: str,
        message: str,
    ) -> None:
        if event_type not in (EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING):
            log.error("unsupported event type: %r", event_type)
            return
        ref = object_reference(obj) if isinstance(obj, dict) else {}
        if not ref.get("name"):
            log.error("cannot reference object %r: will not report event %s", obj, reason)
            return
        self._broadcaster.action(
            self._make_event(ref, annotations, timestamp, event_type, reason, message)
        )

    def _make_event(
        self,
        ref: dict[str, Any],
        annotations: dict[str, str] | None,
        timestamp: datetime,
        event_type: str,
        reason: str,
        message: str,
    ) -> dict[str, Any]:
        stamp = format_time(timestamp)
        meta: dict[str, Any] = {
            "name": f"{event_name_prefix(ref['name'])}.{_suffix.next(timestamp)}",
            "namespace": ref.get("namespace") or "default",
        }
        if annotations:
            meta["annotations"] = dict(annotations)
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": meta,
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "source": dict(self._source),
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": event_type,
            "eventTime": None,
            "reportingComponent": "",
            "reportingInstance": "",
        }
