"""Backoff, deadline and TTL checks shared by job kinds (no I/O).

``limit_failure`` fixes two v0.5.3 defects (divergence D10): failures are counted from
the pods themselves (container restarts of every claimed pod whose replica type restarts in
place, whatever the pod's phase) plus the pods recreated under the ExitCode policy, instead of
the work queue's requeue count, which ``forget`` resets after every successful sync. The
ExitCode count is read from the job's status, where it survives an operator restart
(divergence D11).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from tf_operator.apis.common.v1.types import RESTART_POLICY_ALWAYS, RESTART_POLICY_ON_FAILURE
from tf_operator.common.jobcontroller.kind import Job, JobKind
from tf_operator.k8s.objects import Obj, labels_of

_RESTART_IN_PLACE = (RESTART_POLICY_ON_FAILURE, RESTART_POLICY_ALWAYS)
Logger = logging.LoggerAdapter[logging.Logger]

# The reasons of batch/v1 Job's limit failures (divergence D36).
BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
DEADLINE_EXCEEDED = "DeadlineExceeded"


@dataclass(frozen=True)
class LimitFailure:
    """Why a job failed on a limit: the Failed condition's (and event's) reason and message."""

    reason: str
    message: str


def container_restarts(pod: Obj) -> int:
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


def count_restarts(pods: Iterable[Obj]) -> int:
    return sum(container_restarts(p) for p in pods)


def backoff_failures(
    job: Job,
    pods: list[Obj],
    replica_type_label: str,
    logger: logging.LoggerAdapter[logging.Logger],
) -> int:
    """What ``backoffLimit`` is compared with: recorded ExitCode recreations plus container
    restarts of the pods of every replica type that restarts in place."""
    restarts = job.status.exit_code_restarts
    failures = 0 if restarts is None else restarts.count
    for rtype, spec in job.replica_specs().items():
        if spec.restart_policy not in _RESTART_IN_PLACE:
            logger.warning(
                "The restart policy of replica %s of the job %s is not OnFailure or Always. "
                "Not counted in backoff limit.",
                rtype,
                job.name,
            )
            continue
        rt = rtype.lower()
        failures += count_restarts(p for p in pods if labels_of(p).get(replica_type_label) == rt)
    return failures


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


def limit_failure(
    kind: JobKind, job: Job, pods: list[Obj], now: datetime, logger: Logger
) -> LimitFailure | None:
    """The failure when the backoff limit or the active deadline is exceeded."""
    kind_name, limit = kind.resource.kind, job.spec.backoff_limit
    failures = 0 if limit is None else backoff_failures(job, pods, kind.labels.replica_type, logger)
    if past_backoff_limit(limit, failures):
        return LimitFailure(
            BACKOFF_LIMIT_EXCEEDED,
            f"{kind_name} {job.name} has failed because it has reached the specified backoff limit",
        )
    if past_active_deadline(job.spec.active_deadline_seconds, job.status.start_time, now):
        return LimitFailure(
            DEADLINE_EXCEEDED,
            f"{kind_name} {job.name} has failed because it was active longer than specified "
            "deadline",
        )
    return None
