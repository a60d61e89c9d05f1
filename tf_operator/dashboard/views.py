"""What each page shows, as plain dicts for the templates (no I/O, no web framework). A job of
any kind the SDK knows (TFJob, PyTorchJob) is shown the same way, its kind named on its row."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tf_operator.sdk.conditions import get_conditions, is_finished, job_state, replica_statuses
from tf_operator.sdk.kinds import kind_of
from tf_operator.sdk.lifecycle import (
    blocking_reason,
    policy_in_force,
    restart_budget,
    restarts_by_cause,
)
from tf_operator.sdk.podgroup import PodGroupInfo
from tf_operator.sdk.replicas import replica_info
from tf_operator.sdk.runpolicy import (
    is_managed_elsewhere,
    managed_by,
    queue_name,
    suspend_requested,
)
from tf_operator.sdk.summary import age, duration, manager, replica_counts, suspension


def job_row(job: Mapping[str, Any], now: datetime | None = None) -> dict[str, Any]:
    meta = job.get("metadata") or {}
    counts = replica_statuses(job).values()
    kind = kind_of(job.get("kind"))
    return {
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "kind": kind.kind,
        "plural": kind.plural,  # in the job's address: /namespaces/<ns>/<plural>/<name>
        "key": f"{kind.plural}/{meta.get('name', '')}",  # one row per job of one kind
        "state": job_state(job),
        "replicas": replica_counts(job),
        "active": sum(c["active"] for c in counts),
        "succeeded": sum(c["succeeded"] for c in counts),
        "failed": sum(c["failed"] for c in counts),
        "age": age(meta.get("creationTimestamp"), now),
        "duration": duration(job, now) or "-",
        "deleting": bool(meta.get("deletionTimestamp")),
        # the controller running the job when it is not this operator
        "managed_by": managed_by(job) if is_managed_elsewhere(job) else None,
        "queue": queue_name(job),
        # restarts used of the budget for a job with a lifecycle policy (docs/policies.md), and
        # why any job is blocked; None where unset
        **lifecycle_cells(job),
    }


def lifecycle_cells(job: Mapping[str, Any]) -> dict[str, str | None]:
    blocked = blocking_reason(job)
    if policy_in_force(job) is None:
        return {"restarts": None, "blocked": blocked}
    used, limit = restart_budget(job)
    return {"restarts": f"{used}/{'-' if limit is None else limit}", "blocked": blocked}


@dataclass(frozen=True)
class Panes:
    """Which panes of a job page reading beyond the job the caller may see."""

    events: bool = True  # list events
    logs: bool = True  # get pods/log
    group: bool = True  # list podgroups in every API group the job's PodGroup may live in


def job_detail(
    job: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]] | None,  # None: not the caller's to read
    now: datetime | None = None,
    group: PodGroupInfo | None = None,
) -> dict[str, Any]:
    status = job.get("status") or {}
    ours = not is_managed_elsewhere(job) and not is_finished(job)
    return {
        "row": job_row(job, now),
        "suspension": suspension(job),
        "manager": manager(job),
        # what the Suspend/Resume button offers: None when this operator would not act on it
        "toggle": ("resume" if suspend_requested(job) else "suspend") if ours else None,
        "group": group,  # the job's PodGroup when it is gang-scheduled
        "lifecycle": lifecycle_summary(job),
        "blocked": blocking_reason(job),  # why any job waits (D104, D156, D157)
        "start_time": status.get("startTime") or "-",
        "completion_time": status.get("completionTime") or "-",
        "replicas": [replica_info(p, kind=kind_of(job.get("kind"))) for p in pods],
        "conditions": [
            {
                "type": c.get("type", ""),
                "status": c.get("status", ""),
                "reason": c.get("reason", ""),
                "message": c.get("message", ""),
                "time": c.get("lastTransitionTime") or c.get("lastUpdateTime") or "",
            }
            for c in get_conditions(job)
        ],
        "events": [
            {
                "type": e.get("type", ""),
                "reason": e.get("reason", ""),
                "message": e.get("message", ""),
                "count": e.get("count") or 1,
                "age": age(
                    e.get("lastTimestamp")
                    or e.get("eventTime")
                    or (e.get("metadata") or {}).get("creationTimestamp"),
                    now,
                ),
            }
            for e in events
        ]
        if events is not None
        else None,
    }


def log_key(pod: Mapping[str, Any]) -> tuple[str, str, int] | None:
    """Which run of a pod's container a log follower reads: (name, uid, restarts); None while
    the pod has not started (no log to read yet)."""
    status = pod.get("status") or {}
    if (status.get("phase") or "Pending") == "Pending":
        return None
    meta = pod.get("metadata") or {}
    restarts = sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])
    return meta.get("name", ""), meta.get("uid", ""), restarts


def lifecycle_summary(job: Mapping[str, Any]) -> dict[str, str] | None:
    """The lifecycle policy in force, the restart budget used and restarts by cause
    (docs/policies.md); None for a job without a policy."""
    policy = policy_in_force(job)
    if policy is None:
        return None
    used, limit = restart_budget(job)
    causes = restarts_by_cause(job)
    return {
        "policy": json.dumps(policy, sort_keys=True, separators=(",", ":")),
        "budget": f"{used} of {'unlimited' if limit is None else limit} used",
        "causes": ", ".join(f"{k}={v}" for k, v in sorted(causes.items())) or "-",
    }
