"""Resource locks: where the leader election record is stored.

A lock reads and writes one `LeaderElectionRecord` in one API object:
- `EndpointsLock` (what tf-operator v0.5.3 uses) and `ConfigMapLock` keep it as JSON in
  the annotation `control-plane.alpha.kubernetes.io/leader` of an Endpoints / ConfigMap;
- `LeaseLock` keeps it in the spec of a `coordination.k8s.io/v1` Lease;
- `MultiLock` holds two of them as one (client-go's `endpointsleases` and `configmapsleases`):
  it reads both and writes both, so it excludes a holder of either. That is the migration
  path from the Endpoints lock to a Lease: old replicas (Endpoints only), migrating replicas
  (both) and new replicas (Lease only) never lead together as long as each step of the
  rollout runs beside the previous one only; an `endpoints` replica beside a `leases` one
  shares no object and both would lead. When the two records name different holders the
  read record names `UNKNOWN_LEADER` and moves with either, so it never looks expired while
  someone renews one of them.

`get` raises the client's `ApiError` (404 when the object does not exist yet) and
remembers the object it read; `update` writes that object back with the new record, so
the server rejects it with 409 Conflict if someone else wrote in between. The server
never judges expiry: the electors do, from the record.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from tf_operator.k8s.client import (
    CONFIGMAPS,
    ENDPOINTS,
    LEASES,
    Resource,
    is_already_exists,
    is_not_found,
)

log = logging.getLogger(__name__)

LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
ENDPOINTS_RESOURCE_LOCK = "endpoints"
CONFIGMAPS_RESOURCE_LOCK = "configmaps"
LEASES_RESOURCE_LOCK = "leases"
ENDPOINTS_LEASES_RESOURCE_LOCK = "endpointsleases"
CONFIGMAPS_LEASES_RESOURCE_LOCK = "configmapsleases"
# The holder a MultiLock reports when its two records disagree (client-go's UnknownLeader).
UNKNOWN_LEADER = "leaderelection.k8s.io/unknown"


def format_time(t: datetime | None) -> str | None:
    """metav1.Time: RFC 3339, UTC, whole seconds."""
    return None if t is None else t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(t: datetime | None) -> str | None:
    """metav1.MicroTime: RFC 3339, UTC, microseconds."""
    return None if t is None else t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=UTC)


@dataclass
class LeaderElectionRecord:
    """Who holds the lock, since when, for how long; compared by value."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    leader_transitions: int = 0

    def to_json(self) -> str:
        return json.dumps(
            {
                "holderIdentity": self.holder_identity,
                "leaseDurationSeconds": self.lease_duration_seconds,
                "acquireTime": format_time(self.acquire_time),
                "renewTime": format_time(self.renew_time),
                "leaderTransitions": self.leader_transitions,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> LeaderElectionRecord:
        data = json.loads(text)
        return cls(
            holder_identity=data.get("holderIdentity") or "",
            lease_duration_seconds=int(data.get("leaseDurationSeconds") or 0),
            acquire_time=parse_time(data.get("acquireTime")),
            renew_time=parse_time(data.get("renewTime")),
            leader_transitions=int(data.get("leaderTransitions") or 0),
        )


class Lock(Protocol):
    """What the elector needs of a lock (client-go's ``resourcelock.Interface``)."""

    identity: str

    def describe(self) -> str: ...

    def get(self) -> LeaderElectionRecord: ...

    def create(self, record: LeaderElectionRecord) -> None: ...

    def update(self, record: LeaderElectionRecord) -> None: ...

    def record_event(self, message: str) -> None: ...


class ResourceLock:
    """Common behaviour; subclasses say how the record maps onto their object."""

    resource: Resource
    kind: str

    def __init__(
        self, kube_client: Any, namespace: str, name: str, identity: str, recorder: Any = None
    ) -> None:
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.recorder = recorder
        self._client = kube_client.resource(self.resource)
        self._obj: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get(self) -> LeaderElectionRecord:
        """Read the record (an empty one if the object carries none)."""
        self._obj = self._client.get(self.name, namespace=self.namespace)
        return self._read(self._obj)

    def create(self, record: LeaderElectionRecord) -> None:
        body = {
            "apiVersion": self._api_version(),
            "kind": self.kind,
            "metadata": {"name": self.name, "namespace": self.namespace},
        }
        self._write(body, record)
        self._obj = self._client.create(body, namespace=self.namespace)

    def update(self, record: LeaderElectionRecord) -> None:
        """Write the record into the object last read (409 if it changed since)."""
        if self._obj is None:
            raise RuntimeError(f"{self.kind} lock not initialised: call get or create first")
        self._write(self._obj, record)
        self._obj = self._client.update(self._obj, namespace=self.namespace)

    def record_event(self, message: str) -> None:
        """Record "<identity> <message>" as an event on the lock object, if we can."""
        if self.recorder is None:
            return
        meta = dict((self._obj or {}).get("metadata") or {})
        meta.setdefault("name", self.name)
        meta.setdefault("namespace", self.namespace)
        subject = {"apiVersion": self._api_version(), "kind": self.kind, "metadata": meta}
        self.recorder.eventf(subject, "Normal", "LeaderElection", "%s %s", self.identity, message)

    def _api_version(self) -> str:
        r = self.resource
        return f"{r.group}/{r.version}" if r.group else r.version

    def _read(self, obj: dict[str, Any]) -> LeaderElectionRecord:
        raise NotImplementedError

    def _write(self, obj: dict[str, Any], record: LeaderElectionRecord) -> None:
        raise NotImplementedError


class _AnnotationLock(ResourceLock):
    def _read(self, obj: dict[str, Any]) -> LeaderElectionRecord:
        text = ((obj.get("metadata") or {}).get("annotations") or {}).get(LEADER_ANNOTATION)
        return LeaderElectionRecord.from_json(text) if text else LeaderElectionRecord()

    def _write(self, obj: dict[str, Any], record: LeaderElectionRecord) -> None:
        meta = obj.setdefault("metadata", {})
        annotations = meta.get("annotations") or {}
        annotations[LEADER_ANNOTATION] = record.to_json()
        meta["annotations"] = annotations


class EndpointsLock(_AnnotationLock):
    """The record in an annotation of an Endpoints object (no subsets)."""

    resource = ENDPOINTS
    kind = "Endpoints"


class ConfigMapLock(_AnnotationLock):
    """The record in an annotation of a ConfigMap."""

    resource = CONFIGMAPS
    kind = "ConfigMap"


class LeaseLock(ResourceLock):
    """The record in the spec of a coordination.k8s.io/v1 Lease."""

    resource = LEASES
    kind = "Lease"

    def _read(self, obj: dict[str, Any]) -> LeaderElectionRecord:
        spec = obj.get("spec") or {}
        return LeaderElectionRecord(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=parse_time(spec.get("acquireTime")),
            renew_time=parse_time(spec.get("renewTime")),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def _write(self, obj: dict[str, Any], record: LeaderElectionRecord) -> None:
        obj["spec"] = {
            "holderIdentity": record.holder_identity,
            "leaseDurationSeconds": record.lease_duration_seconds,
            "acquireTime": format_micro_time(record.acquire_time),
            "renewTime": format_micro_time(record.renew_time),
            "leaseTransitions": record.leader_transitions,
        }


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    return a if b is None or (a is not None and a >= b) else b


class MultiLock:
    """A primary and a secondary lock held as one; see the module docstring."""

    def __init__(self, primary: ResourceLock, secondary: ResourceLock) -> None:
        self.primary = primary
        self.secondary = secondary
        self.identity = primary.identity

    def describe(self) -> str:
        return self.primary.describe()

    def get(self) -> LeaderElectionRecord:
        """The primary's record; the secondary's holder must agree (else `UNKNOWN_LEADER`).
        A missing secondary is fine while someone else holds the primary (an old replica)."""
        primary = self.primary.get()
        try:
            secondary = self.secondary.get()
        except Exception as err:
            if is_not_found(err) and primary.holder_identity != self.identity:
                return primary
            raise
        if primary.holder_identity != secondary.holder_identity:
            return replace(
                primary,
                holder_identity=UNKNOWN_LEADER,
                renew_time=_later(primary.renew_time, secondary.renew_time),
            )
        return primary

    def create(self, record: LeaderElectionRecord) -> None:
        try:
            self.primary.create(record)
        except Exception as err:
            if not is_already_exists(err):
                raise
        self.secondary.create(record)

    def update(self, record: LeaderElectionRecord) -> None:
        self.primary.update(record)
        try:
            self.secondary.get()
        except Exception as err:
            if not is_not_found(err):
                raise
            self.secondary.create(record)
            return
        self.secondary.update(record)

    def record_event(self, message: str) -> None:
        self.primary.record_event(message)


_SINGLE_LOCKS: dict[str, type[ResourceLock]] = {
    ENDPOINTS_RESOURCE_LOCK: EndpointsLock,
    CONFIGMAPS_RESOURCE_LOCK: ConfigMapLock,
    LEASES_RESOURCE_LOCK: LeaseLock,
}
_MULTI_LOCKS: dict[str, tuple[type[ResourceLock], type[ResourceLock]]] = {
    ENDPOINTS_LEASES_RESOURCE_LOCK: (EndpointsLock, LeaseLock),
    CONFIGMAPS_LEASES_RESOURCE_LOCK: (ConfigMapLock, LeaseLock),
}
LOCK_TYPES = (*_SINGLE_LOCKS, *_MULTI_LOCKS)


def new_lock(
    lock_type: str,
    kube_client: Any,
    namespace: str,
    name: str,
    identity: str,
    recorder: Any = None,
) -> Lock:
    """A lock by type name: "endpoints", "configmaps", "leases", "endpointsleases" or
    "configmapsleases" (client-go's names)."""
    if lock_type in _SINGLE_LOCKS:
        return _SINGLE_LOCKS[lock_type](kube_client, namespace, name, identity, recorder)
    if lock_type in _MULTI_LOCKS:
        primary, secondary = _MULTI_LOCKS[lock_type]
        return MultiLock(
            primary(kube_client, namespace, name, identity, recorder),
            secondary(kube_client, namespace, name, identity, recorder),
        )
    raise ValueError(f"invalid lock type {lock_type!r}")


# The single lock each single-kind lock could be migrating from or to (client-go's
# endpoints -> endpointsleases -> leases path).
_COUNTERPARTS = {
    ENDPOINTS_RESOURCE_LOCK: LEASES_RESOURCE_LOCK,
    CONFIGMAPS_RESOURCE_LOCK: LEASES_RESOURCE_LOCK,
    LEASES_RESOURCE_LOCK: ENDPOINTS_RESOURCE_LOCK,
}


def held_elsewhere(
    lock_type: str,
    kube_client: Any,
    namespace: str,
    name: str,
    identity: str,
    now: datetime,
) -> str | None:
    """Who leads through the other kind of lock of the same name, if someone does and their
    lease has not run out: a replica on ``endpoints`` and one on ``leases`` share no lock and
    would both lead (the middle of a rolling update that changes the lock kind). None for a
    multi-lock, which takes both."""
    other = _COUNTERPARTS.get(lock_type)
    if other is None:
        return None
    lock = _SINGLE_LOCKS[other](kube_client, namespace, name, identity)
    try:
        record = lock.get()
    except Exception:  # noqa: BLE001 - absent or unreadable: nobody we can see leads there
        return None
    if not record.holder_identity or record.holder_identity == identity:
        return None
    if record.renew_time is None:
        return None
    if (now - record.renew_time).total_seconds() > record.lease_duration_seconds:
        return None
    return f"{other} lock {lock.describe()} held by {record.holder_identity}"
