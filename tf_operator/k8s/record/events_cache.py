"""Event correlation: what to do with an event before it is written.

Three stages, as client-go's events cache:
1. Aggregation: events that differ only by message (same source, involved object, type
   and reason) seen `AGGREGATE_MAX_EVENTS` times within `AGGREGATE_INTERVAL` seconds are
   folded into one event with the message "(combined from similar events): <last>".
2. De-duplication: an event whose key (source, involved object, type, reason, message)
   was already written is written again as a PATCH of the first one, with `count`
   increased and a new `lastTimestamp`, instead of as a new Event object. The memory of
   written events is an LRU of `LRU_CACHE_ENTRIES` keys (no time limit, like upstream).
3. Spam filter: each source + involved object gets a token bucket of `SPAM_BURST` events
   refilled at one event every 5 minutes; events beyond it are skipped.

The correlator is used from one sender thread, but is thread-safe anyway.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.workqueue.token_bucket import TokenBucket

LRU_CACHE_ENTRIES = 4096
# Events that vary only by message, seen this many times within the interval, aggregate.
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
# A source may emit this many events about one object, then one per 5 minutes.
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0

AGGREGATE_MESSAGE_PREFIX = "(combined from similar events): "


class LRUCache:
    """A bounded mapping that forgets the least recently used key."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._data: OrderedDict[str, Any] = OrderedDict()

    def get(self, key: str) -> Any:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def add(self, key: str, value: Any) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.max_entries:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


def _involved(event: dict[str, Any]) -> dict[str, Any]:
    return event.get("involvedObject") or {}


def _source(event: dict[str, Any]) -> dict[str, Any]:
    return event.get("source") or {}


@dataclass(frozen=True, slots=True)
class EventKeys:
    """The keys an event is known by, read from it once (correlating an event needs three)."""

    spam: str  # source and involved object: one token bucket each
    group: str  # ... and type and reason: the events that aggregate together
    dedup: str  # ... and field path and message: the Event a repeat patches

    @staticmethod
    def of(event: dict[str, Any]) -> EventKeys:
        src, ref = _source(event), _involved(event)
        head = [src.get("component", ""), src.get("host", "")]
        kind, namespace, name = ref.get("kind", ""), ref.get("namespace", ""), ref.get("name", "")
        uid, api_version = ref.get("uid", ""), ref.get("apiVersion", "")
        kind_reason = [event.get("type", ""), event.get("reason", "")]
        spam = "\x00".join([*head, kind, namespace, name, uid, api_version])
        dedup = "\x00".join(
            [*head, kind, namespace, name, ref.get("fieldPath", ""), uid, api_version,
             *kind_reason, event.get("message", "")]
        )  # fmt: skip
        return EventKeys(spam, "\x00".join([spam, *kind_reason]), dedup)


def event_key(event: dict[str, Any]) -> str:
    """Identity of an event for de-duplication."""
    return EventKeys.of(event).dedup


def spam_key(event: dict[str, Any]) -> str:
    """Identity of (source, involved object) for the spam filter."""
    return EventKeys.of(event).spam


def aggregate_keys(event: dict[str, Any]) -> tuple[str, str]:
    """(group of similar events, the event's identity within that group)."""
    return EventKeys.of(event).group, event.get("message", "")


class SpamFilter:
    def __init__(self, clock: Clock, burst: int = SPAM_BURST, qps: float = SPAM_QPS) -> None:
        self._clock = clock
        self._burst = burst
        self._qps = qps
        self._cache = LRUCache(LRU_CACHE_ENTRIES)

    def should_skip(self, event: dict[str, Any], key: str | None = None) -> bool:
        key = spam_key(event) if key is None else key
        bucket = self._cache.get(key)
        if bucket is None:
            bucket = TokenBucket(self._qps, self._burst, self._clock)
        self._cache.add(key, bucket)
        return not bucket.try_accept()


@dataclass
class _AggregateRecord:
    local_keys: set[str] = field(default_factory=set)
    last_seen: float = float("-inf")


class Aggregator:
    def __init__(
        self,
        clock: Clock,
        max_events: int = AGGREGATE_MAX_EVENTS,
        interval: float = AGGREGATE_INTERVAL,
    ) -> None:
        self._clock = clock
        self._max_events = max_events
        self._interval = interval
        self._cache = LRUCache(LRU_CACHE_ENTRIES)

    def aggregate(
        self, event: dict[str, Any], make_name: Any, keys: EventKeys | None = None
    ) -> tuple[dict[str, Any], str]:
        """Return the event to write (maybe a combined one) and its de-duplication key."""
        now = self._clock.monotonic()
        keys = EventKeys.of(event) if keys is None else keys
        group, local = keys.group, event.get("message", "")
        record = self._cache.get(group)
        if record is None or now - record.last_seen > self._interval:
            record = _AggregateRecord()
        record.local_keys.add(local)
        record.last_seen = now
        self._cache.add(group, record)
        if len(record.local_keys) < self._max_events:
            return event, keys.dedup
        record.local_keys.pop()  # keep the set from growing past the threshold
        ref = _involved(event)
        timestamp = event.get("lastTimestamp")
        combined = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": make_name(ref.get("name", "")),
                "namespace": (event.get("metadata") or {}).get("namespace"),
            },
            "involvedObject": copy.deepcopy(ref),
            "reason": event.get("reason", ""),
            "message": AGGREGATE_MESSAGE_PREFIX + event.get("message", ""),
            "source": copy.deepcopy(_source(event)),
            "firstTimestamp": timestamp,
            "lastTimestamp": timestamp,
            "count": 1,
            "type": event.get("type", ""),
            "eventTime": None,
            "reportingComponent": "",
            "reportingInstance": "",
        }
        return combined, group


@dataclass
class _Observation:
    count: int
    first_timestamp: str | None
    name: str
    resource_version: str


class EventLogger:
    """Remembers written events so that a repeat becomes a count-increasing patch."""

    def __init__(self) -> None:
        self._cache = LRUCache(LRU_CACHE_ENTRIES)

    def observe(
        self, event: dict[str, Any], key: str
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        event = {**event, "metadata": dict(event.get("metadata") or {})}  # what is changed
        meta = event["metadata"]
        patch = None
        last: _Observation | None = self._cache.get(key)
        if last is not None and last.count > 0:
            meta["name"] = last.name
            if last.resource_version:
                meta["resourceVersion"] = last.resource_version
            event["firstTimestamp"] = last.first_timestamp
            event["count"] = last.count + 1
            # What a two-way strategic merge patch between "the event with no count,
            # message or lastTimestamp" and the new event contains.
            patch = {"count": event["count"], "lastTimestamp": event.get("lastTimestamp")}
            if event.get("message"):
                patch["message"] = event["message"]
        self._remember(key, event)
        return event, patch

    def update_state(self, event: dict[str, Any]) -> None:
        self._remember(event_key(event), event)

    def _remember(self, key: str, event: dict[str, Any]) -> None:
        meta = event.get("metadata") or {}
        self._cache.add(
            key,
            _Observation(
                count=int(event.get("count") or 0),
                first_timestamp=event.get("firstTimestamp"),
                name=meta.get("name", ""),
                resource_version=meta.get("resourceVersion", ""),
            ),
        )


@dataclass
class CorrelationResult:
    event: dict[str, Any] | None
    patch: dict[str, Any] | None = None
    skip: bool = False


class EventCorrelator:
    """Filters, aggregates and de-duplicates events before they are written."""

    def __init__(self, clock: Clock | None = None, make_name: Any = None) -> None:
        clock = clock or REAL_CLOCK
        self._lock = threading.Lock()
        self._spam = SpamFilter(clock)
        self._aggregator = Aggregator(clock)
        self._logger = EventLogger()
        self._make_name = make_name or (lambda name: name)

    def correlate(self, event: dict[str, Any]) -> CorrelationResult:
        keys = EventKeys.of(event)
        with self._lock:
            aggregated, key = self._aggregator.aggregate(event, self._make_name, keys)
            observed, patch = self._logger.observe(aggregated, key)
            # a combined event is about the same source and object: the same bucket
            if self._spam.should_skip(observed, keys.spam):
                return CorrelationResult(None, skip=True)
            return CorrelationResult(observed, patch)

    def update_state(self, event: dict[str, Any]) -> None:
        """Learn the server's copy (name, resourceVersion, count) of a written event."""
        with self._lock:
            self._logger.update_state(event)
