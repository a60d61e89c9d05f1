"""One row per replica pod: what ``tfjob describe`` and the dashboard show about it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tf_operator.sdk.kinds import TFJOB, JobKindInfo


@dataclass(frozen=True)
class ReplicaInfo:
    replica_type: str  # as labelled: lower case (worker, ps, chief, ...)
    index: str
    pod: str
    node: str
    phase: str  # the pod phase, or Terminating once deletion has begun
    restarts: int
    exit_code: int | None  # of the kind's container's current or last run
    reason: str  # why it is waiting or terminated (CrashLoopBackOff, Error, ...)


def replica_info(
    pod: Mapping[str, Any], container: str | None = None, kind: JobKindInfo = TFJOB
) -> ReplicaInfo:
    """The row of one pod of a job of ``kind`` (its default container unless told)."""
    container = container or kind.container
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    status = pod.get("status") or {}
    phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase") or "Pending"
    statuses = status.get("containerStatuses") or []
    cs = next((c for c in statuses if c.get("name") == container), statuses[0] if statuses else {})
    state = cs.get("state") or {}
    terminated = state.get("terminated") or (cs.get("lastState") or {}).get("terminated") or {}
    reason = next((s.get("reason") for s in state.values() if s and s.get("reason")), "")
    exit_code = terminated.get("exitCode")
    return ReplicaInfo(
        replica_type=labels.get(kind.replica_type_label, ""),
        index=labels.get(kind.replica_index_label, ""),
        pod=meta.get("name", ""),
        node=(pod.get("spec") or {}).get("nodeName") or "",
        phase=phase,
        restarts=int(cs.get("restartCount") or 0),
        exit_code=None if exit_code is None else int(exit_code),
        reason=reason or "",
    )
