"""Backoff, deadline and TTL arithmetic shared by job kinds (pure functions, no I/O).

``past_backoff_limit`` fixes two v0.5.3 defects (spec §10 #11, #12): failures are counted from
the pods themselves (container restarts of every claimed pod, whatever its phase, plus the
pods the controller recreated under the ExitCode policy) instead of the work queue's requeue
count, which ``forget`` resets after every successful sync.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime


def container_restarts(pod: dict) -> int:
    """Sum of ``restartCount`` over a pod's init and regular container statuses."""
    status = pod.get("status") or {}
    total = 0
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(key) or []:
            total += int(cs.get("restartCount") or 0)
    return total


def past_backoff_limit(backoff_limit: int | None, failures: int) -> bool:
    """v0.5.3's comparison: any failure when the limit is 0, else failures ≥ limit."""
    if backoff_limit is None:
        return False
    if backoff_limit == 0:
        return failures > 0
    return failures >= backoff_limit


def count_restarts(pods: Iterable[dict]) -> int:
    return sum(container_restarts(p) for p in pods)


def past_active_deadline(
    active_deadline_seconds: int | None, start_time: datetime | None, now: datetime
) -> bool:
    if active_deadline_seconds is None or start_time is None:
        return False
    return (now - start_time).total_seconds() >= active_deadline_seconds


def seconds_until_deadline(
    active_deadline_seconds: int, start_time: datetime, now: datetime
) -> float:
    return active_deadline_seconds - (now - start_time).total_seconds()


def seconds_until_ttl_expiry(ttl_seconds: int, completion_time: datetime, now: datetime) -> float:
    """Seconds left before a finished job may be deleted (≤ 0: delete it now)."""
    return ttl_seconds - (now - completion_time).total_seconds()
