"""TFJob status: condition algebra, replica counts, per-type outcome, and the status write.

Conditions (spec §6.1) with the §10 fixes:

* a condition already True with the same reason and message is left alone, so a running job
  does not get a new ``lastUpdateTime`` (and a status write) on every pass (#20);
* Succeeded and Failed are terminal and exclusive: once either is True no condition is added
  (v0.5.3 stopped only at Failed, so Succeeded and Failed could both be True) (#19);
* reaching a terminal condition turns Running *and* Restarting to False, refreshing their
  transition times (v0.5.3 left Restarting True and kept a stale transition time) (#19);
* otherwise as v0.5.3: Running and Restarting replace each other, a condition type appears
  at most once, new conditions are appended.

``update_status_single`` decides per replica type as v0.5.3 (Chief/Master decides when
present, else Worker: all workers done or worker 0 completed; any type's failed pods fail the
job) except that a failure is "restarting" only if every failed pod of the type is being
recreated under the ExitCode policy (v0.5.3 let one retryable pod mask permanent failures, #13).

Status is written through the status subresource; on 409 the job is re-read and the computed
status re-applied, a few times, before the error goes back to the work queue.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from tf_operator.apis.common.v1.types import (
    CONDITION_FALSE,
    CONDITION_TRUE,
    JOB_FAILED,
    JOB_RESTARTING,
    JOB_RUNNING,
    JOB_SUCCEEDED,
    DecodeError,
    JobCondition,
    JobStatus,
    ReplicaStatus,
)
from tf_operator.apis.tensorflow.v1.types import (
    TFJob,
    contains_chief_or_master_spec,
    is_chief_or_master,
    is_worker,
)
from tf_operator.common.jobcontroller.util import job_key
from tf_operator.control.util import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING
from tf_operator.controller.v1.tensorflow import metrics
from tf_operator.controller.v1.tensorflow.context import ReconcileContext
from tf_operator.k8s.client import is_conflict
from tf_operator.logger import logger_for_job

log = logging.getLogger(__name__)

TFJOB_CREATED_REASON = "TFJobCreated"
TFJOB_SUCCEEDED_REASON = "TFJobSucceeded"
TFJOB_RUNNING_REASON = "TFJobRunning"
TFJOB_FAILED_REASON = "TFJobFailed"
TFJOB_RESTARTING_REASON = "TFJobRestarting"

# Attempts of a status write that keeps meeting 409 Conflict before giving up to the queue.
STATUS_UPDATE_ATTEMPTS = 5


# ---- condition algebra (pure) --------------------------------------------------------------


def get_condition(status: JobStatus, cond_type: str) -> JobCondition | None:
    for condition in status.conditions or []:
        if condition.type == cond_type:
            return condition
    return None


def has_condition(status: JobStatus, cond_type: str) -> bool:
    return any(c.type == cond_type and c.status == CONDITION_TRUE for c in status.conditions or [])


def is_succeeded(status: JobStatus) -> bool:
    return has_condition(status, JOB_SUCCEEDED)


def is_failed(status: JobStatus) -> bool:
    return has_condition(status, JOB_FAILED)


def is_finished(status: JobStatus) -> bool:
    return is_succeeded(status) or is_failed(status)


def new_condition(cond_type: str, reason: str, message: str, now: datetime) -> JobCondition:
    return JobCondition(
        type=cond_type,
        status=CONDITION_TRUE,
        reason=reason,
        message=message,
        last_update_time=now,
        last_transition_time=now,
    )


def update_job_conditions(
    status: JobStatus, cond_type: str, reason: str, message: str, now: datetime
) -> bool:
    """Make ``cond_type`` True with this reason/message; True when it newly became True."""
    for condition in status.conditions or []:
        if condition.type == cond_type and condition.status == CONDITION_TRUE:
            if condition.reason != reason or condition.message != message:
                condition.reason = reason
                condition.message = message
                condition.last_update_time = now
            return False
    if is_finished(status):
        return False
    terminal = cond_type in (JOB_SUCCEEDED, JOB_FAILED)
    kept: list[JobCondition] = []
    for condition in status.conditions or []:
        if condition.type == cond_type:
            continue
        if (cond_type, condition.type) in (
            (JOB_RESTARTING, JOB_RUNNING),
            (JOB_RUNNING, JOB_RESTARTING),
        ):
            continue
        running_like = condition.type in (JOB_RUNNING, JOB_RESTARTING)
        if terminal and running_like and condition.status != CONDITION_FALSE:
            condition.status = CONDITION_FALSE
            condition.last_update_time = now
            condition.last_transition_time = now
        kept.append(condition)
    kept.append(new_condition(cond_type, reason, message, now))
    status.conditions = kept
    return True


def merge_status_onto_live(ours: JobStatus, live_raw: Any) -> JobStatus:
    """Our computed status, keeping what the live object already established.

    Used when a status write met a conflict: the live start/completion times win, and a
    condition the live object already has with the same status keeps its transition time
    (and its update time when reason and message are unchanged).
    """
    try:
        live = JobStatus.from_dict(live_raw)
    except DecodeError:
        return ours
    merged = ours.deep_copy()
    merged.start_time = live.start_time or ours.start_time
    merged.completion_time = live.completion_time or ours.completion_time
    for condition in merged.conditions or []:
        previous = get_condition(live, condition.type)
        if previous is None or previous.status != condition.status:
            continue
        condition.last_transition_time = (
            previous.last_transition_time or condition.last_transition_time
        )
        if (previous.reason, previous.message) == (condition.reason, condition.message):
            condition.last_update_time = previous.last_update_time or condition.last_update_time
    return merged


def initialize_replica_statuses(job: TFJob, rtype: str) -> None:
    if job.status.replica_statuses is None:
        job.status.replica_statuses = {}
    job.status.replica_statuses[rtype] = ReplicaStatus()


def update_replica_statuses(job: TFJob, rtype: str, pod: dict) -> None:
    phase = (pod.get("status") or {}).get("phase")
    counts = job.status.replica_statuses[rtype]
    if phase == "Running":
        counts.active += 1
    elif phase == "Succeeded":
        counts.succeeded += 1
    elif phase == "Failed":
        counts.failed += 1


def _job_log(job: TFJob) -> logging.LoggerAdapter:
    return logger_for_job({"metadata": job.metadata})


class StatusMixin:
    """Status decisions and the status write of :class:`TFController`."""

    def _set_condition(
        self, ctx: ReconcileContext, job: TFJob, cond_type: str, reason: str, message: str
    ) -> bool:
        return update_job_conditions(job.status, cond_type, reason, message, ctx.now)

    def _succeed(self, ctx: ReconcileContext, job: TFJob) -> None:
        msg = f"TFJob {job.name} successfully completed."
        if job.status.completion_time is None and not is_finished(job.status):
            job.status.completion_time = ctx.now
        if self._set_condition(ctx, job, JOB_SUCCEEDED, TFJOB_SUCCEEDED_REASON, msg):
            ctx.event(EVENT_TYPE_NORMAL, TFJOB_SUCCEEDED_REASON, msg, JOB_SUCCEEDED)
            ctx.count(metrics.JOBS_SUCCESSFUL.inc, JOB_SUCCEEDED)

    def fail_job(self, ctx: ReconcileContext, job: TFJob, message: str) -> None:
        """Set Failed/TFJobFailed (once) with its event, metric and completion time."""
        if is_finished(job.status):
            return
        if job.status.completion_time is None:
            job.status.completion_time = ctx.now
        if self._set_condition(ctx, job, JOB_FAILED, TFJOB_FAILED_REASON, message):
            ctx.event(EVENT_TYPE_NORMAL, TFJOB_FAILED_REASON, message, JOB_FAILED)
            ctx.count(metrics.JOBS_FAILED.inc, JOB_FAILED)

    def update_status_single(
        self,
        ctx: ReconcileContext,
        job: TFJob,
        rtype: str,
        replicas: int,
        restarting: int = 0,
        new_restarts: int = 0,
        worker0_completed: bool = False,
    ) -> None:
        """Fold one replica type's counts into the job's conditions (spec §6.2).

        ``restarting``: failed pods of this type being recreated under ExitCode (their failure
        is not final); ``new_restarts``: how many of them this pass deleted.
        """
        counts = job.status.replica_statuses[rtype]
        expected = replicas - counts.succeeded
        running, failed = counts.active, counts.failed
        _job_log(job).info(
            "TFJob=%s, ReplicaType=%s expected=%d, running=%d, failed=%d",
            job.name,
            rtype,
            expected,
            running,
            failed,
        )
        if job.status.start_time is None:
            job.status.start_time = ctx.now
            if job.spec.active_deadline_seconds is not None:
                _job_log(job).info(
                    "Job with ActiveDeadlineSeconds will sync after %d seconds",
                    job.spec.active_deadline_seconds,
                )
                self.work_queue.add_after(job_key(job), job.spec.active_deadline_seconds)
        running_msg = f"TFJob {job.name} is running."
        if contains_chief_or_master_spec(job):
            if is_chief_or_master(rtype):
                if running > 0:
                    self._set_condition(ctx, job, JOB_RUNNING, TFJOB_RUNNING_REASON, running_msg)
                if expected == 0:
                    self._succeed(ctx, job)
        elif is_worker(rtype):
            if expected == 0 or worker0_completed:
                self._succeed(ctx, job)
            elif running > 0:
                self._set_condition(ctx, job, JOB_RUNNING, TFJOB_RUNNING_REASON, running_msg)
        if failed <= 0:
            return
        if failed - restarting > 0:
            self.fail_job(
                ctx, job, f"TFJob {job.name} has failed because {failed} {rtype} replica(s) failed."
            )
            return
        msg = f"TFJob {job.name} is restarting because {failed} {rtype} replica(s) failed."
        self._set_condition(ctx, job, JOB_RESTARTING, TFJOB_RESTARTING_REASON, msg)
        if new_restarts > 0:
            ctx.event(EVENT_TYPE_WARNING, TFJOB_RESTARTING_REASON, msg)
            ctx.count(metrics.JOBS_RESTARTED.inc)

    # ---- status write ----------------------------------------------------------------------

    def update_tfjob_status(self, job: TFJob) -> dict | None:
        """PUT the status subresource; on 409 re-read the job and re-apply our status.

        Returns the live status that a retry overwrote (None when the first write went
        through). Re-applying keeps the live start/completion times and the transition
        times of conditions the live object already had, so a stale cache cannot move them.
        """
        body = job.to_dict()
        replaced: dict | None = None
        for attempt in range(1, STATUS_UPDATE_ATTEMPTS + 1):
            try:
                self.tfjob_client.update_status(body, namespace=job.namespace)
                return replaced
            except Exception as err:
                if not is_conflict(err) or attempt == STATUS_UPDATE_ATTEMPTS:
                    raise
                _job_log(job).info("Conflict writing the status of %s; retrying", job.name)
                live = self.tfjob_client.get(job.name, namespace=job.namespace)
                if (live.get("metadata") or {}).get("uid") != job.uid:
                    raise
                replaced = live.get("status") or {}
                job.status = merge_status_onto_live(job.status, replaced)
                live["status"] = job.status.to_dict()
                body = live
        return replaced

    def write_status_if_changed(
        self, ctx: ReconcileContext, job: TFJob, old_status: dict[str, Any]
    ) -> None:
        """Write the status when it differs from ``old_status``; then release held effects."""
        replaced = None
        if job.status.to_dict() != old_status:
            replaced = self.update_status_handler(job)
        already_true: frozenset[str] = frozenset()
        if isinstance(replaced, dict):
            already_true = frozenset(
                c.get("type")
                for c in replaced.get("conditions") or []
                if isinstance(c, dict) and c.get("status") == CONDITION_TRUE
            )
        ctx.flush(self.recorder, job, already_true)
