"""How a job (TFJob, PyTorchJob) is summarised for people: its age, how long it ran, its replica counts, whether
it is suspended and who manages it.

kubectl's wording (``duration.HumanDuration``), shared by the ``tfjob`` command and the
dashboard, which both sit on the SDK and not on each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from tf_operator.sdk.conditions import is_finished
from tf_operator.sdk.kinds import replica_specs
from tf_operator.sdk.runpolicy import (
    is_managed_elsewhere,
    is_suspended,
    managed_by,
    suspend_requested,
)


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def human_duration(seconds: float) -> str:
    """kubectl's short durations (``duration.HumanDuration``): 45s, 3m12s, 95m, 3h5m, 30h, 4d."""
    seconds = max(0, int(seconds))
    minutes, hours = seconds // 60, seconds // 3600
    if seconds < 120:
        return f"{seconds}s"
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    return f"{hours // 24}d"


def age(timestamp: str | None, now: datetime | None = None) -> str:
    when = parse_time(timestamp)
    if when is None:
        return "<unknown>"
    return human_duration(((now or datetime.now(UTC)) - when).total_seconds())


def replica_counts(job: Mapping[str, Any]) -> str:
    """``PS=1,Worker=2`` (``Master=1,Worker=2``) from the spec (a missing ``replicas`` counts
    as 1)."""
    parts = []
    for rtype, spec in replica_specs(job).items():
        replicas = (spec or {}).get("replicas")
        parts.append(f"{rtype}={1 if replicas is None else replicas}")
    return ",".join(parts) or "<none>"


def duration(job: Mapping[str, Any], now: datetime | None = None) -> str:
    """How long the job has run since it (last) started; nothing while it is suspended, as
    resuming starts the clock afresh."""
    status = job.get("status") or {}
    start = parse_time(status.get("startTime"))
    if start is None or is_suspended(job):
        return ""
    end = parse_time(status.get("completionTime")) or now or datetime.now(UTC)
    return human_duration((end - start).total_seconds())


def suspension(job: Mapping[str, Any]) -> str:
    """``spec.runPolicy.suspend``, and whether the operator has acted on it yet."""
    requested = suspend_requested(job)
    if is_managed_elsewhere(job):
        return str(requested).lower()
    if is_finished(job) and requested != is_suspended(job):
        return f"{str(requested).lower()} (finished: not acted on)"
    if requested == is_suspended(job):
        return "true (suspended: no pods)" if requested else "false"
    return "true (being suspended)" if requested else "false (being resumed)"


def manager(job: Mapping[str, Any]) -> str:
    """The controller that runs the job, and what that means when it is not this operator."""
    if is_managed_elsewhere(job):
        return f"{managed_by(job)} (not this operator: it creates nothing for the job)"
    return managed_by(job)
