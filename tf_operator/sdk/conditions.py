"""What state a TFJob is in, read from its ``status`` (pure functions on the JSON dict).

A TFJob's ``status.conditions`` grows as the operator records ``Created``, ``Running``,
``Restarting``, ``Suspended`` (training-operator v1.9's ``runPolicy.suspend``), ``Succeeded`` or
``Failed``; the condition in force has ``status: "True"``. ``Succeeded`` and ``Failed`` are
final. :func:`job_state` names the condition in force: a final
one if present, else the most recent true one, else ``Pending`` (nothing recorded yet), so it
agrees with the ``State`` column of ``kubectl get tfjobs`` once the operator has written status.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tf_operator.apis.common.v1.types import (
    CONDITION_TRUE,
    JOB_CREATED,
    JOB_FAILED,
    JOB_RESTARTING,
    JOB_RUNNING,
    JOB_SUCCEEDED,
    JOB_SUSPENDED,
)

STATE_PENDING = "Pending"
FINAL_CONDITIONS = (JOB_SUCCEEDED, JOB_FAILED)
ALL_CONDITIONS = (
    JOB_CREATED,
    JOB_RUNNING,
    JOB_RESTARTING,
    JOB_SUSPENDED,
    JOB_SUCCEEDED,
    JOB_FAILED,
)


def get_conditions(job: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``status.conditions`` in the order the operator recorded them (empty when unset)."""
    return list((job.get("status") or {}).get("conditions") or [])


def has_condition(job: Mapping[str, Any], condition_type: str) -> bool:
    """True when the job has a condition of that type with status ``True``."""
    return any(
        c.get("type") == condition_type and c.get("status") == CONDITION_TRUE
        for c in get_conditions(job)
    )


def has_any_condition(job: Mapping[str, Any], condition_types: Iterable[str]) -> str | None:
    """The first of ``condition_types`` the job has in force, or None."""
    return next((t for t in condition_types if has_condition(job, t)), None)


def job_state(job: Mapping[str, Any]) -> str:
    """The condition in force: Succeeded/Failed if final, else the latest true one, else Pending."""
    final = has_any_condition(job, FINAL_CONDITIONS)
    if final:
        return final
    current = [c for c in get_conditions(job) if c.get("status") == CONDITION_TRUE]
    return str(current[-1].get("type")) if current else STATE_PENDING


def is_running(job: Mapping[str, Any]) -> bool:
    return job_state(job) == JOB_RUNNING


def is_restarting(job: Mapping[str, Any]) -> bool:
    return job_state(job) == JOB_RESTARTING


def is_succeeded(job: Mapping[str, Any]) -> bool:
    return has_condition(job, JOB_SUCCEEDED)


def is_failed(job: Mapping[str, Any]) -> bool:
    return has_condition(job, JOB_FAILED)


def is_finished(job: Mapping[str, Any]) -> bool:
    return has_any_condition(job, FINAL_CONDITIONS) is not None


def replica_statuses(job: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """``status.replicaStatuses`` with every count present (active, succeeded, failed)."""
    raw = (job.get("status") or {}).get("replicaStatuses") or {}
    return {
        rtype: {k: int((counts or {}).get(k) or 0) for k in ("active", "succeeded", "failed")}
        for rtype, counts in raw.items()
    }
