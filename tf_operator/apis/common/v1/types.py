"""Framework-independent job API types (``pkg/apis/common/v1`` of v0.5.3).

Each type is a dataclass that decodes from and encodes to the exact JSON of the Go structs.
Keys we do not model are kept in ``extra`` and written back unchanged, so a round trip never
loses fields added by newer API versions or by users. Pod templates stay plain dicts: the
operator only reads and copies them, and a typed model would drop unknown pod fields.

Decoding is strict about the types of the fields we model and raises :class:`DecodeError`
naming the JSON path, so the controller can report a malformed object instead of crashing.
Times are aware UTC datetimes truncated to seconds, the precision of ``metav1.Time``.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from tf_operator.apis.common.v1.fields import DecodeError, expect_dict, opt_int, opt_str, rest
from tf_operator.k8s.objects import json_copy

# Condition types.
JOB_CREATED = "Created"
JOB_RUNNING = "Running"
JOB_RESTARTING = "Restarting"
JOB_SUCCEEDED = "Succeeded"
JOB_FAILED = "Failed"
# training-operator v1.9's: True while runPolicy.suspend holds the job (its pods deleted);
# False with reason <Kind>Resumed once it is resumed.
JOB_SUSPENDED = "Suspended"
# Not in v0.5.3 (divergence D39): True while the job runs on its last valid spec because the
# spec was edited into an invalid one.
JOB_SPEC_IGNORED = "SpecIgnored"

# The labels training-operator v1.9 puts on every pod and service of a job, whatever its kind
# (Kueue and the Kubeflow SDKs select on them). The operator writes them beside v0.5.3's, which
# stay its selector.
TRAINING_LABEL_PREFIX = "training.kubeflow.org/"
OPERATOR_NAME_LABEL = TRAINING_LABEL_PREFIX + "operator-name"
JOB_NAME_LABEL = TRAINING_LABEL_PREFIX + "job-name"
REPLICA_TYPE_LABEL = TRAINING_LABEL_PREFIX + "replica-type"
REPLICA_INDEX_LABEL = TRAINING_LABEL_PREFIX + "replica-index"
JOB_ROLE_LABEL = TRAINING_LABEL_PREFIX + "job-role"
# Not in v1.9 (divergence D154): the uid of the job that created the pod, as batch/v1 stamps
# controller-uid, so a pod of an earlier job of the same name is told apart whatever its time.
JOB_UID_LABEL = TRAINING_LABEL_PREFIX + "job-uid"

CONDITION_TRUE = "True"
CONDITION_FALSE = "False"
CONDITION_UNKNOWN = "Unknown"

# Clean pod policies ("" is the undefined value that defaulting replaces).
CLEAN_POD_POLICY_UNDEFINED = ""
CLEAN_POD_POLICY_ALL = "All"
CLEAN_POD_POLICY_RUNNING = "Running"
CLEAN_POD_POLICY_NONE = "None"

# Restart policies.
RESTART_POLICY_ALWAYS = "Always"
RESTART_POLICY_ON_FAILURE = "OnFailure"
RESTART_POLICY_NEVER = "Never"
RESTART_POLICY_EXIT_CODE = "ExitCode"


def parse_time(value: Any, path: str) -> datetime | None:
    """Parse an RFC3339 ``metav1.Time`` (``null`` / absent / ``""`` mean unset)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise DecodeError(f"{path}: expected an RFC3339 time string, got {value!r}")
    try:
        return _parse_rfc3339(value)
    except ValueError as err:
        raise DecodeError(f"{path}: invalid RFC3339 time {value!r}") from err


# A job's few timestamps are parsed and formatted on every pass and status write: memoised
# (datetimes are immutable; a failed parse is not cached).
@functools.lru_cache(maxsize=4096)
def _parse_rfc3339(value: str) -> datetime:
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).replace(microsecond=0)


def format_time(value: datetime | None) -> str | None:
    """RFC3339 in UTC with second precision (``2019-07-01T12:00:00Z``), as Go writes it."""
    if value is None:
        return None
    return _format_utc(value)


@functools.lru_cache(maxsize=4096)
def _format_utc(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def truncate_time(value: datetime) -> datetime:
    """Drop sub-second precision, so in-memory times equal what a round trip gives back."""
    return value.astimezone(UTC).replace(microsecond=0)


def object_ref(api_version: str, kind: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """A small object naming a job, for events (what an event's involvedObject needs)."""
    meta = {
        k: metadata[k] for k in ("name", "namespace", "uid", "resourceVersion") if k in metadata
    }
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


# ---- types ---------------------------------------------------------------------------------


@dataclass
class ReplicaStatus:
    """Pod counts of one replica type. Zero fields are omitted in JSON (Go ``omitempty``).

    ``selector`` (a label selector as text) and ``label_selector`` (a ``metav1.LabelSelector``)
    are training-operator v1.9's: what selects the type's pods, for tools such as a scale
    subresource. A kind writes them when its ``JobKind.replica_selectors`` says so.
    """

    active: int = 0
    succeeded: int = 0
    failed: int = 0
    selector: str = ""
    label_selector: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _COUNTS = ("active", "succeeded", "failed")
    _KEYS = (*_COUNTS, "selector", "labelSelector")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> ReplicaStatus:
        data = expect_dict(data, path) or {}
        return cls(
            active=opt_int(data, "active", path) or 0,
            succeeded=opt_int(data, "succeeded", path) or 0,
            failed=opt_int(data, "failed", path) or 0,
            selector=opt_str(data, "selector", path) or "",
            label_selector=expect_dict(data.get("labelSelector"), f"{path}.labelSelector"),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in self._COUNTS:
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.selector:
            out["selector"] = self.selector
        if self.label_selector is not None:
            out["labelSelector"] = json_copy(self.label_selector)
        out.update(json_copy(self.extra))
        return out


@dataclass
class JobCondition:
    """One entry of ``status.conditions``."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_update_time: datetime | None = None
    last_transition_time: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("type", "status", "reason", "message", "lastUpdateTime", "lastTransitionTime")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> JobCondition:
        data = expect_dict(data, path, allow_none=False)
        assert data is not None
        return cls(
            type=opt_str(data, "type", path) or "",
            status=opt_str(data, "status", path) or "",
            reason=opt_str(data, "reason", path) or "",
            message=opt_str(data, "message", path) or "",
            last_update_time=parse_time(data.get("lastUpdateTime"), f"{path}.lastUpdateTime"),
            last_transition_time=parse_time(
                data.get("lastTransitionTime"), f"{path}.lastTransitionTime"
            ),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "status": self.status}
        if self.reason:
            out["reason"] = self.reason
        if self.message:
            out["message"] = self.message
        # metav1.Time marshals a zero time as null even with omitempty.
        out["lastUpdateTime"] = format_time(self.last_update_time)
        out["lastTransitionTime"] = format_time(self.last_transition_time)
        out.update(json_copy(self.extra))
        return out


@dataclass
class ExitCodeRestarts:
    """Pods recreated under ``restartPolicy: ExitCode``, which ``backoffLimit`` counts.

    Not in v0.5.3 (divergence D14): the count lives in the job's status so it survives an
    operator restart or a leader change. ``counted_pods`` holds the UIDs of counted pods that
    may still exist, so recording the same failed pod twice (a retried or interrupted pass)
    counts it once; a UID is dropped once its pod is gone.
    """

    count: int = 0
    counted_pods: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("count", "countedPods")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> ExitCodeRestarts:
        data = expect_dict(data, path) or {}
        pods = data.get("countedPods") or []
        if not isinstance(pods, list) or not all(isinstance(u, str) for u in pods):
            raise DecodeError(f"{path}.countedPods: expected a list of strings")
        return cls(
            count=opt_int(data, "count", path) or 0,
            counted_pods=list(pods),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"count": self.count}
        if self.counted_pods:
            out["countedPods"] = list(self.counted_pods)
        out.update(json_copy(self.extra))
        return out

    def record(self, pod_uid: str) -> bool:
        """Count the failure of pod ``pod_uid`` unless it is counted already; True if new."""
        if pod_uid in self.counted_pods:
            return False
        self.counted_pods.append(pod_uid)
        self.count += 1
        return True

    def retain(self, existing_pod_uids: set[str]) -> None:
        """Forget the UIDs of counted pods that no longer exist (the count stays)."""
        self.counted_pods = [u for u in self.counted_pods if u in existing_pod_uids]


@dataclass
class JobStatus:
    """``status`` of a job. ``conditions`` and ``replicaStatuses`` serialise as ``null``."""

    conditions: list[JobCondition] | None = None
    replica_statuses: dict[str, ReplicaStatus] | None = None
    start_time: datetime | None = None
    completion_time: datetime | None = None
    last_reconcile_time: datetime | None = None
    exit_code_restarts: ExitCodeRestarts | None = None
    # Not in v0.5.3 (divergences D39, D153): the digest of the spec the running job was last
    # reconciled on, and that spec as compact JSON only while an invalid edit is ignored, so
    # that another process goes on from it.
    last_valid_spec: str | None = None
    last_valid_spec_digest: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = (
        "conditions",
        "replicaStatuses",
        "startTime",
        "completionTime",
        "lastReconcileTime",
        "exitCodeRestarts",
        "lastValidSpec",
        "lastValidSpecDigest",
    )

    @classmethod
    def from_dict(cls, data: Any, path: str = "status") -> JobStatus:
        data = expect_dict(data, path) or {}
        raw_conditions = data.get("conditions")
        conditions = None
        if raw_conditions is not None:
            if not isinstance(raw_conditions, list):
                raise DecodeError(f"{path}.conditions: expected a list")
            conditions = [
                JobCondition.from_dict(c, f"{path}.conditions[{i}]")
                for i, c in enumerate(raw_conditions)
            ]
        raw_statuses = expect_dict(data.get("replicaStatuses"), f"{path}.replicaStatuses")
        statuses = None
        if raw_statuses is not None:
            statuses = {
                str(k): ReplicaStatus.from_dict(v, f"{path}.replicaStatuses.{k}")
                for k, v in raw_statuses.items()
            }
        return cls(
            conditions=conditions,
            replica_statuses=statuses,
            start_time=parse_time(data.get("startTime"), f"{path}.startTime"),
            completion_time=parse_time(data.get("completionTime"), f"{path}.completionTime"),
            last_reconcile_time=parse_time(
                data.get("lastReconcileTime"), f"{path}.lastReconcileTime"
            ),
            exit_code_restarts=None
            if data.get("exitCodeRestarts") is None
            else ExitCodeRestarts.from_dict(data["exitCodeRestarts"], f"{path}.exitCodeRestarts"),
            last_valid_spec=opt_str(data, "lastValidSpec", path),
            last_valid_spec_digest=opt_str(data, "lastValidSpecDigest", path),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "conditions": None
            if self.conditions is None
            else [c.to_dict() for c in self.conditions],
            "replicaStatuses": None
            if self.replica_statuses is None
            else {k: v.to_dict() for k, v in self.replica_statuses.items()},
        }
        for key, value in (
            ("startTime", self.start_time),
            ("completionTime", self.completion_time),
            ("lastReconcileTime", self.last_reconcile_time),
        ):
            if value is not None:
                out[key] = format_time(value)
        if self.exit_code_restarts is not None:
            out["exitCodeRestarts"] = self.exit_code_restarts.to_dict()
        if self.last_valid_spec is not None:
            out["lastValidSpec"] = self.last_valid_spec
        if self.last_valid_spec_digest is not None:
            out["lastValidSpecDigest"] = self.last_valid_spec_digest
        out.update(json_copy(self.extra))
        return out

    def deep_copy(self) -> JobStatus:
        return copy.deepcopy(self)


ReplicaSpecs = dict[str, "ReplicaSpec | None"]


def decode_replica_specs(data: dict[str, Any], key: str, path: str) -> ReplicaSpecs | None:
    """A kind's replica specs (``spec.<key>``: ``tfReplicaSpecs``, ``pytorchReplicaSpecs``) by
    type; ``None`` when the map is absent or null, a null entry kept as ``None``."""
    raw_specs = expect_dict(data.get(key), f"{path}.{key}")
    if raw_specs is None:
        return None
    return {
        str(rtype): None if raw is None else ReplicaSpec.from_dict(raw, f"{path}.{key}.{rtype}")
        for rtype, raw in raw_specs.items()
    }


def in_kind_order(replica_types: Iterable[str], order: Sequence[str]) -> list[str]:
    """``replica_types`` with the kind's known types first, in its ``order``, then any others
    sorted."""
    present = set(replica_types)
    return [t for t in order if t in present] + sorted(present.difference(order))


def encode_replica_specs(specs: ReplicaSpecs | None) -> dict[str, Any] | None:
    """The replica specs map as written: null when absent (no omitempty in Go)."""
    if specs is None:
        return None
    return {rtype: None if spec is None else spec.to_dict() for rtype, spec in specs.items()}


@dataclass
class ReplicaSpec:
    """One entry of a job's replica specs (``spec.tfReplicaSpecs``, ``spec.pytorchReplicaSpecs``):
    how many pods, from which template, restarted how."""

    replicas: int | None = None
    template: dict[str, Any] = field(default_factory=dict)
    restart_policy: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("replicas", "template", "restartPolicy")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> ReplicaSpec:
        data = expect_dict(data, path, allow_none=False)
        assert data is not None
        template = expect_dict(data.get("template"), f"{path}.template") or {}
        return cls(
            replicas=opt_int(data, "replicas", path),
            template=json_copy(template),
            restart_policy=opt_str(data, "restartPolicy", path) or "",
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.replicas is not None:
            out["replicas"] = self.replicas
        out["template"] = json_copy(self.template)
        if self.restart_policy:
            out["restartPolicy"] = self.restart_policy
        out.update(json_copy(self.extra))
        return out

    # -- template accessors (the template is a plain PodTemplateSpec dict[str, Any]) --

    def pod_spec(self) -> dict[str, Any]:
        """The template's pod spec (created empty if absent)."""
        return cast(dict[str, Any], self.template.setdefault("spec", {}))

    def container_port(self, container_name: str, port_name: str) -> int | None:
        """``containerPort`` of the ``port_name`` port of the ``container_name`` container."""
        for container in self.containers():
            if container.get("name") != container_name:
                continue
            for port in container.get("ports") or []:
                if port.get("name") == port_name:
                    return int(port.get("containerPort") or 0)
        return None

    def containers(self) -> list[dict[str, Any]]:
        """The template's containers; an empty list when the template has none."""
        spec = self.template.get("spec")
        containers = spec.get("containers") if isinstance(spec, dict) else None
        if not isinstance(containers, list):
            return []
        return [c for c in containers if isinstance(c, dict)]
