"""Job status: condition algebra, the per-replica-type rules, and the status write.

Conditions follow v0.5.3's ``updateTFJobConditions`` (Running and Restarting replace each
other, a type appears once, new ones are appended) except that an unchanged True condition is
left alone (D19) and Succeeded/Failed are final and exclusive, turning Running and Restarting
False with fresh transition times (D18). training-operator v1.9's suspension adds Suspended
(True while suspended, False once resumed) and turns Running False (D61).
:meth:`StatusReconciler.update_replica_type` is ``updateStatusSingle``: the kind says whether a
type makes the job Running or Succeeded and whether its failures are tolerated (v1.9's dynamic
workers); other failed pods fail the job unless every one is being recreated under ExitCode
(D12). The :class:`StatusWriter` writes only a changed status (D15), then releases the pass's
held events (D28). ``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Generic

from tf_operator.apis.common.v1.types import (
    CONDITION_FALSE,
    CONDITION_TRUE,
    JOB_CREATED,
    JOB_FAILED,
    JOB_RESTARTING,
    JOB_RUNNING,
    JOB_SPEC_IGNORED,
    JOB_SUCCEEDED,
    JOB_SUSPENDED,
    JobCondition,
    JobStatus,
)
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.failure_policy import POD_FAILURE_POLICY_REASON
from tf_operator.common.jobcontroller.kind import J, JobKind
from tf_operator.common.jobcontroller.pod import ReplicaTally
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.util import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING
from tf_operator.k8s.client import ResourceInterface
from tf_operator.k8s.objects import Obj

log = logging.getLogger(__name__)

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


def is_suspended(status: JobStatus) -> bool:
    return has_condition(status, JOB_SUSPENDED)


def raw_conditions(raw: Obj) -> list[Obj]:
    """The conditions of a cached, undecoded job (none when its status is malformed)."""
    status = raw.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    return [c for c in conditions if isinstance(c, dict)] if isinstance(conditions, list) else []


def raw_finished_conditions(raw: Obj) -> list[Obj]:
    """The True Succeeded or Failed conditions of a cached, undecoded job."""
    return [
        c
        for c in raw_conditions(raw)
        if c.get("type") in (JOB_SUCCEEDED, JOB_FAILED) and c.get("status") == CONDITION_TRUE
    ]


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


def set_condition_false(
    status: JobStatus, cond_type: str, reason: str, message: str, now: datetime
) -> bool:
    """Make ``cond_type`` False with this reason and message, as training-operator v1.9's
    ``UpdateJobConditions`` with status False does: nothing on a finished job or when it is
    False for this reason already; else it moves to the end (Running takes Restarting with it),
    its transition time kept if it was False. True when anything changed."""
    existing = get_condition(status, cond_type)
    if is_finished(status) or (
        existing is not None and (existing.status, existing.reason) == (CONDITION_FALSE, reason)
    ):
        return False
    condition = JobCondition(cond_type, CONDITION_FALSE, reason, message, now, now)
    if existing is not None and existing.status == CONDITION_FALSE:
        condition.last_transition_time = existing.last_transition_time
    dropped = {cond_type, JOB_RESTARTING} if cond_type == JOB_RUNNING else {cond_type}
    status.conditions = [c for c in status.conditions or [] if c.type not in dropped]
    status.conditions.append(condition)
    return True


def set_spec_ignored(status: JobStatus, reason: str, message: str, now: datetime) -> bool:
    """Make SpecIgnored True with this reason and message; True when that changed anything.

    It goes just before the last condition, so the last one (kubectl's State column) stays the
    job's lifecycle state.
    """
    existing = get_condition(status, JOB_SPEC_IGNORED)
    held = existing is not None and existing.status == CONDITION_TRUE
    if held and existing is not None and (existing.reason, existing.message) == (reason, message):
        return False
    condition = new_condition(JOB_SPEC_IGNORED, reason, message, now)
    if held and existing is not None:
        condition.last_transition_time = existing.last_transition_time
    others = [c for c in status.conditions or [] if c.type != JOB_SPEC_IGNORED]
    others.insert(max(len(others) - 1, 0), condition)
    status.conditions = others
    return True


def clear_spec_ignored(status: JobStatus) -> None:
    """Drop the SpecIgnored condition (the spec is valid again)."""
    if status.conditions and get_condition(status, JOB_SPEC_IGNORED) is not None:
        status.conditions = [c for c in status.conditions if c.type != JOB_SPEC_IGNORED]


# ---- status rules --------------------------------------------------------------------------


class StatusReconciler(Generic[J]):
    """Conditions of a job from its replica types' pods (v0.5.3 ``status.go``)."""

    def __init__(self, kind: JobKind[J]) -> None:
        self._kind = kind
        name = kind.resource.kind
        self.created_reason = f"{name}Created"
        self.running_reason = f"{name}Running"
        self.succeeded_reason = f"{name}Succeeded"
        self.failed_reason = f"{name}Failed"
        self.restarting_reason = f"{name}Restarting"
        self.suspended_reason = f"{name}Suspended"
        self.resumed_reason = f"{name}Resumed"

    def _set(self, ctx: SyncContext[J], cond_type: str, reason: str, message: str) -> bool:
        return update_job_conditions(ctx.job.status, cond_type, reason, message, ctx.now)

    def mark_created(self, ctx: SyncContext[J]) -> None:
        """The Created condition, counted once (v0.5.3 set it on the cached object, D9)."""
        job = ctx.job
        if get_condition(job.status, JOB_CREATED) is not None:
            return
        msg = f"{self._kind.resource.kind} {job.name} is created."
        if self._set(ctx, JOB_CREATED, self.created_reason, msg):
            ctx.count(self._kind.metrics.created.inc)

    def suspend(self, ctx: SyncContext[J]) -> None:
        """The job is suspended: no pod is active, Running turns False and Suspended True,
        announced once (v1.9 announced it on every pass)."""
        job, kind = ctx.job, self._kind.resource.kind
        for counts in (job.status.replica_statuses or {}).values():
            counts.active = 0
        msg = f"{kind} {job.name} is suspended."
        if has_condition(job.status, JOB_RUNNING):
            set_condition_false(job.status, JOB_RUNNING, self.suspended_reason, msg, ctx.now)
        if self._set(ctx, JOB_SUSPENDED, self.suspended_reason, msg):
            ctx.event(EVENT_TYPE_NORMAL, self.suspended_reason, msg)

    def resume(self, ctx: SyncContext[J]) -> None:
        """A suspended job runs again: Suspended turns False and ``startTime`` starts afresh,
        so ``activeDeadlineSeconds`` counts from now (v1.9)."""
        job = ctx.job
        msg = f"{self._kind.resource.kind} {job.name} is resumed."
        if set_condition_false(job.status, JOB_SUSPENDED, self.resumed_reason, msg, ctx.now):
            job.status.start_time = ctx.now
            ctx.event(EVENT_TYPE_NORMAL, self.resumed_reason, msg)

    def succeed(self, ctx: SyncContext[J]) -> None:
        job = ctx.job
        msg = f"{self._kind.resource.kind} {job.name} successfully completed."
        if job.status.completion_time is None and not is_finished(job.status):
            job.status.completion_time = ctx.now
        if self._set(ctx, JOB_SUCCEEDED, self.succeeded_reason, msg):
            ctx.event(EVENT_TYPE_NORMAL, self.succeeded_reason, msg)
            ctx.count(self._kind.metrics.successful.inc)

    def fail(self, ctx: SyncContext[J], message: str, reason: str | None = None) -> None:
        """Set Failed (once) with its event, metric and completion time; ``reason`` defaults
        to ``<Kind>Failed`` (a replica failure)."""
        job = ctx.job
        if is_finished(job.status):
            return
        reason = reason or self.failed_reason
        if job.status.completion_time is None:
            job.status.completion_time = ctx.now
        if self._set(ctx, JOB_FAILED, reason, message):
            ctx.event(EVENT_TYPE_NORMAL, reason, message)
            ctx.count(self._kind.metrics.failed.inc)

    def update_replica_type(
        self, ctx: SyncContext[J], rtype: str, replicas: int, tally: ReplicaTally
    ) -> None:
        """Fold one replica type's counts into the job's conditions (v0.5.3
        ``updateStatusSingle``); ``tally`` says which failed pods are being recreated."""
        job = ctx.job
        counts = (job.status.replica_statuses or {})[rtype]
        expected = replicas - counts.succeeded
        running, failed = counts.active, counts.failed
        ctx.logger.debug(  # D53
            "%s=%s, ReplicaType=%s expected=%d, running=%d, failed=%d",
            self._kind.resource.kind,
            job.name,
            rtype,
            expected,
            running,
            failed,
        )
        if job.status.start_time is None:
            job.status.start_time = ctx.now
            deadline = job.run_policy.active_deadline_seconds
            if deadline is not None:
                # The controller arms the re-sync at the end of every pass (D7).
                ctx.logger.info(
                    "Job with ActiveDeadlineSeconds will sync after %d seconds", deadline
                )
        if tally.fail_message is not None:  # a failure rule said FailJob (D102)
            self.fail(ctx, tally.fail_message, POD_FAILURE_POLICY_REASON)
            return
        progress = self._kind.progress(job, rtype, replicas, counts, tally.index0_completed)
        name = self._kind.resource.kind
        if progress.running:
            self._set(ctx, JOB_RUNNING, self.running_reason, f"{name} {job.name} is running.")
        lifecycle = job.run_policy.lifecycle
        if progress.succeeded and (lifecycle is None or lifecycle.success is None):
            self.succeed(ctx)  # a success rule decides instead (success_policy, D101)
        if failed <= 0:
            return
        if failed - tally.restarting > 0:
            if not progress.failures_tolerated:
                self.fail(
                    ctx, f"{name} {job.name} has failed because {failed} {rtype} replica(s) failed."
                )
                return
            ctx.logger.debug(  # D53: every pass while they are there
                "%s %s continues regardless %d %s replica(s) failed",
                name,
                job.name,
                failed - tally.restarting,
                rtype,
            )
            if tally.restarting == 0:
                return
        msg = f"{name} {job.name} is restarting because {failed} {rtype} replica(s) failed."
        self._set(ctx, JOB_RESTARTING, self.restarting_reason, msg)
        if tally.new_restarts > 0:
            ctx.event(EVENT_TYPE_WARNING, self.restarting_reason, msg)
            ctx.count(self._kind.metrics.restarted.inc)


# ---- status write --------------------------------------------------------------------------


class StatusWriter:
    """Writes a job's status when it changed, then releases the pass's held effects.

    The write carries the cached resourceVersion. A 409 means the cache is behind (a user's
    edit, or our own last write not seen yet): the error goes back to the queue and the next
    sync recomputes from a fresh cache, as v0.5.3 did; writing what a stale pass computed over
    the live object could undo a terminal condition. Nothing held is emitted twice: effects are
    released only after a write went through (D28).
    """

    def __init__(
        self,
        jobs: ResourceInterface,
        recorder: EventRecorder,
        # (key, version it replaced, version it made, whether that version needs no pass)
        written: Callable[[str, str, str, bool], None] | None = None,
    ) -> None:
        self._jobs = jobs
        self._recorder = recorder
        self._written = written

    def write_if_changed(self, ctx: SyncContext[J]) -> None:
        job = ctx.job
        status = job.status.to_dict()
        if status != ctx.old_status:
            # The status subresource reads only status and metadata (its resourceVersion):
            # the cached object carries both, no need to encode the whole decoded job.
            body = {**ctx.raw, "status": status} if ctx.raw else job.to_dict()
            stored = self._jobs.update_status(body, namespace=job.namespace)
            if self._written is not None:
                # The informer's update of this write brings nothing a pass would act on,
                # unless the write finished the job: the terminal branch runs on it (D97).
                quiet = not (is_finished(job.status) and not raw_finished_conditions(ctx.raw))
                made = str((stored.get("metadata") or {}).get("resourceVersion", ""))
                self._written(ctx.key, str(job.metadata.get("resourceVersion", "")), made, quiet)
        ctx.flush(self._recorder)
