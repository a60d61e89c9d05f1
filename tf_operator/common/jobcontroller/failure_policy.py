"""The failure policy of a job's lifecycle policy (``lifecyclePolicy.failure``, D102, D103).

A job without one goes as before: a failed pod is recreated under ``restartPolicy: ExitCode``
with a retryable code, else it fails the job. With one, each pod of the job that ended
(phase ``Failed``) is judged once, by the first rule whose matchers all hold (its replica
type, its default container's exit code, whether it was disrupted), into an action:

* ``RestartReplica``: the pod is recreated, counted against ``backoffLimit``;
* ``RestartJob``: every pod of the job is deleted and recreated together, counted once;
* ``FailJob``: the job fails at once, with reason ``PodFailurePolicy`` (batch/v1's);
* ``Ignore``: the pod is recreated without counting.

A disruption is a pod with a ``DisruptionTarget=True`` condition, a status reason a kubelet
gives a pod it stopped for the infrastructure (evicted, node shut down, preempted, node lost),
or a pod deleted by someone other than the operator; no rule matching it, it is recreated
without counting (``Ignore``), or counted with ``countDisruptions``. Anything else no rule
matches goes by the replica's restart policy as before.

Every decision is kept in the job's status before its pod is deleted, the pod's UID in
``status.exitCodeRestarts.countedPods`` (counted or not) and its cause in
``status.restartsByCause``, so a retried pass, an operator restart or a re-list neither
repeats nor loses one (as D11 does for ExitCode). ``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

from typing import Protocol

from tf_operator.apis.common.v1.lifecycle import (
    ACTION_DEFAULT,
    ACTION_FAIL_JOB,
    ACTION_IGNORE,
    ACTION_RESTART_JOB,
    ACTION_RESTART_REPLICA,
    RESTARTS_BY_CAUSE,
    RESTARTS_BY_REPLICA_TYPE,
    FailurePolicy,
)
from tf_operator.apis.common.v1.types import ExitCodeRestarts
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.kind import J, Job
from tf_operator.k8s.objects import Obj, meta

# Why a job's replicas were recreated, as status.restartsByCause counts them.
CAUSE_DISRUPTION = "Disruption"  # not counted against backoffLimit unless countDisruptions
CAUSE_EXIT_CODE = "ExitCode"  # restartPolicy ExitCode with a retryable code
CAUSE_FAILURE_RULE = "FailureRule"  # a RestartReplica rule
CAUSE_IGNORED = "Ignored"  # an Ignore rule on what is not a disruption
CAUSE_JOB_RESTART = "JobRestart"  # every replica recreated together, once per restart

# The Failed condition's reason when a rule fails the job (batch/v1 Job's), and when the
# start-up deadline does (D104).
POD_FAILURE_POLICY_REASON = "PodFailurePolicy"
STARTUP_DEADLINE_EXCEEDED = "StartupDeadlineExceeded"

# Status reasons a kubelet gives a pod it stopped for the infrastructure, not the program.
DISRUPTION_REASONS = frozenset(
    {"Evicted", "Preempting", "Preempted", "NodeLost", "Shutdown", "NodeShutdown", "Terminated"}
)
DISRUPTION_TARGET = "DisruptionTarget"


def failure_policy(job: Job) -> FailurePolicy | None:
    policy = job.run_policy.lifecycle
    return None if policy is None else policy.failure


def is_disruption(pod: Obj) -> bool:
    """Whether the pod ended for the infrastructure (see the module docstring)."""
    status = pod.get("status") or {}
    if status.get("reason") in DISRUPTION_REASONS:
        return True
    return any(
        c.get("type") == DISRUPTION_TARGET and c.get("status") == "True"
        for c in status.get("conditions") or ()
        if isinstance(c, dict)
    )


def stops_active_replicas(job: Job) -> bool:
    """Whether the job failed by its lifecycle policy (a FailJob rule, the start-up deadline):
    then every active pod is deleted, as a limit failure's are (D16)."""
    return any(
        c.type == "Failed"
        and c.status == "True"
        and c.reason in (POD_FAILURE_POLICY_REASON, STARTUP_DEADLINE_EXCEEDED)
        for c in job.status.conditions or []
    )


def count_cause(job: Job, cause: str) -> None:
    """One more recreation of ``cause`` in ``status.restartsByCause``."""
    _count(job, RESTARTS_BY_CAUSE, cause)


def _count(job: Job, field: str, key: str) -> None:
    counts = job.status.extra.setdefault(field, {})
    counts[key] = int(counts.get(key, 0)) + 1


def over_replica_type_limit(job: Job, policy: FailurePolicy, rtype: str) -> str | None:
    """Why one more counted restart of ``rtype`` would pass its limit, if it would."""
    limit = policy.limit_of(rtype)
    if limit is None:
        return None
    used = int((job.status.extra.get(RESTARTS_BY_REPLICA_TYPE) or {}).get(rtype, 0))
    if used < limit:
        return None
    return (
        f"its {rtype} replicas were restarted {used} times, their limit "
        f"(lifecyclePolicy.failure.replicaTypeLimits)"
    )


def _restarts(job: Job) -> ExitCodeRestarts:
    if job.status.exit_code_restarts is None:
        job.status.exit_code_restarts = ExitCodeRestarts()
    return job.status.exit_code_restarts


class Tally(Protocol):
    """What the failure policy notes of one replica type's pods in a pass (the pod
    reconciler's tally)."""

    restarting: int  # failed pods being recreated
    new_restarts: int  # of those, decided by this pass
    fail_message: str | None  # FailJob: why
    restart_job: bool  # a RestartJob rule matched


def judge_pod(
    ctx: SyncContext[J],
    rtype: str,
    pod: Obj,
    exit_code: int | None,
    phase: str,
    tally: Tally,
    retryable: bool = False,
) -> bool:
    """Judge one pod of the job by its failure policy; False when the policy has nothing to
    say (no policy, the pod has not ended, or no rule matched what is no disruption and its
    restart policy does not recreate it), and the restart policy decides as before.
    ``retryable``: its restart policy (ExitCode) would recreate it; then it is counted here,
    under its replica type's limit."""
    job = ctx.job
    policy = failure_policy(job)
    if policy is None:
        return False
    uid = str(meta(pod).get("uid") or meta(pod).get("name", ""))
    terminating = bool(meta(pod).get("deletionTimestamp"))
    restarts = _restarts(job)
    if uid in restarts.counted_pods:  # decided by an earlier pass: being recreated
        if phase == "Failed":
            tally.restarting += 1
        if not terminating:
            ctx.restarts.append(pod)  # its delete did not happen (a crash after the write)
        return phase == "Failed"
    if phase != "Failed":
        return False
    # a pod deleted by someone else is a disruption too (the operator records its own)
    disruption = terminating or is_disruption(pod)
    action, index = policy.decide(rtype, exit_code, disruption)
    cause = CAUSE_DISRUPTION if disruption and index < 0 else CAUSE_FAILURE_RULE
    if action == ACTION_DEFAULT and retryable:
        action, cause = ACTION_RESTART_REPLICA, CAUSE_EXIT_CODE
    if action == ACTION_DEFAULT:
        return False
    m = meta(pod)
    ended = f"exit code {exit_code}" if exit_code is not None else "no exit code"
    what = (
        f"pod {m.get('namespace')}.{m.get('name')} of replica type {rtype} ended with {ended}"
        + (" (disrupted)" if disruption else "")
    )
    if action == ACTION_FAIL_JOB:
        tally.fail_message = (
            f"{type(job).__name__} {job.name} has failed because "
            f"{what}: lifecyclePolicy.failure.rules[{index}] says FailJob"
        )
        return True
    over = over_replica_type_limit(job, policy, rtype)
    if action == ACTION_RESTART_REPLICA and over is not None:
        tally.fail_message = f"{type(job).__name__} {job.name} has failed because {what}: {over}"
        return True
    tally.restarting += 1
    tally.new_restarts += 1
    if action == ACTION_RESTART_JOB:
        restarts.counted_pods.append(uid)  # the job's restart is counted once, by the pass
        tally.restart_job = True
    elif action == ACTION_IGNORE:
        restarts.counted_pods.append(uid)
        count_cause(job, CAUSE_DISRUPTION if disruption else CAUSE_IGNORED)
    else:  # RestartReplica, a disruption counted by countDisruptions, an ExitCode recreation
        restarts.record(uid)
        count_cause(job, cause)
        _count(job, RESTARTS_BY_REPLICA_TYPE, rtype)
    ctx.logger.info("%s: %s", what, action)
    if not terminating:
        ctx.restarts.append(pod)
    return True


def restart_whole_job(ctx: SyncContext[J], cause: str = CAUSE_JOB_RESTART) -> None:
    """A ``RestartJob`` rule matched: count one restart, and delete every pod of the job once
    the status records it (each pod's UID kept, so none is judged as it goes)."""
    job = ctx.job
    restarts = _restarts(job)
    restarts.count += 1
    count_cause(job, cause)
    queued = {id(p) for p in ctx.restarts}
    for pod in ctx.pods:
        uid = str(meta(pod).get("uid") or meta(pod).get("name", ""))
        if uid not in restarts.counted_pods:
            restarts.counted_pods.append(uid)
        if id(pod) not in queued and not meta(pod).get("deletionTimestamp"):
            ctx.restarts.append(pod)
    ctx.logger.info("Restarting every replica of %s", job.name)
