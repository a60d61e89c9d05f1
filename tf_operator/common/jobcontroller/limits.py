"""Backoff, deadline and TTL checks shared by job kinds (no I/O).

``limit_failure`` fixes two v0.5.3 defects (divergence D10): failures are counted from
the pods themselves (container restarts of every claimed pod whose replica type restarts in
place, whatever the pod's phase) plus the pods recreated under the ExitCode policy, instead of
the work queue's requeue count, which ``forget`` resets after every successful sync. The
ExitCode count is read from the job's status, where it survives an operator restart
(divergence D11).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tf_operator.apis.common.v1.types import RESTART_POLICY_ALWAYS, RESTART_POLICY_ON_FAILURE
from tf_operator.common.jobcontroller.context import Logger
from tf_operator.common.jobcontroller.kind import J, Job, JobKind
from tf_operator.k8s.objects import Obj, labels_of

_RESTART_IN_PLACE = (RESTART_POLICY_ON_FAILURE, RESTART_POLICY_ALWAYS)

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


def backoff_failures(job: Job, pods: list[Obj], replica_type_label: str, logger: Logger) -> int:
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
        of_type = (p for p in pods if labels_of(p).get(replica_type_label) == rt)
        failures += sum(container_restarts(p) for p in of_type)
    return failures


def seconds_left(limit_seconds: int, since: datetime, now: datetime) -> float:
    """Seconds until ``limit_seconds`` have passed since ``since`` (≤ 0: they have)."""
    return limit_seconds - (now - since).total_seconds()


def past_active_deadline(
    active_deadline_seconds: int | None, start_time: datetime | None, now: datetime
) -> bool:
    if active_deadline_seconds is None or start_time is None:
        return False
    return seconds_left(active_deadline_seconds, start_time, now) <= 0


def limit_failure(
    kind: JobKind[J], job: J, pods: list[Obj], now: datetime, logger: Logger
) -> LimitFailure | None:
    """The failure when the backoff limit or the active deadline is exceeded."""
    kind_name, limit = kind.resource.kind, job.run_policy.backoff_limit
    failures = 0 if limit is None else backoff_failures(job, pods, kind.labels.replica_type, logger)
    if past_backoff_limit(limit, failures):
        return LimitFailure(
            BACKOFF_LIMIT_EXCEEDED,
            f"{kind_name} {job.name} has failed because it has reached the specified backoff limit",
        )
    if past_active_deadline(job.run_policy.active_deadline_seconds, job.status.start_time, now):
        return LimitFailure(
            DEADLINE_EXCEEDED,
            f"{kind_name} {job.name} has failed because it was active longer than specified "
            "deadline",
        )
    return None
