"""Completion rules of a job's lifecycle policy (``lifecyclePolicy.success``, divergence D101).

A job without a success rule succeeds as its kind always said (:mod:`.status`, the kind's
``progress``). With one, the kind's own success rule is set aside and the job succeeds after
a pass's counts show:

* ``Chief`` (TFJob) / ``Master`` (PyTorchJob): the Chief (or Master) succeeded;
* ``Worker0``: worker 0 completed (by the job's defaults' worker-0 rule, D22, D58);
* ``AllWorkers``: every worker succeeded;
* ``MinWorkers``: at least ``minWorkers`` workers, or ``minWorkersPercent`` of them rounded up,
  succeeded;

and, with ``waitForEvaluators``, once every Evaluator replica has succeeded too (a failed
Evaluator fails the job as before). The job's failures are judged first, as before: a pass
that failed the job does not make it succeed. Once the job has succeeded under a rule, what
still runs is stopped (the PS, which never exit on their own, and any replica the rule did not
wait for), whatever the ``cleanPodPolicy``, which then decides the finished pods' fate
(:func:`stops_running_replicas`), as batch/v1 Job terminates the pods left once its
``successPolicy`` is met. ``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic

from tf_operator.apis.common.v1.lifecycle import (
    LEADER_RULES,
    LIFECYCLE_POLICY_FIELD,
    SUCCESS_WORKER0,
    SuccessRule,
)
from tf_operator.apis.common.v1.types import JobStatus, ReplicaSpec, ReplicaStatus
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.kind import J, Job
from tf_operator.common.jobcontroller.status import is_finished

# The replica types the rules name, as both kinds spell them.
LEADER_TYPES = ("Chief", "Master")
WORKER_TYPE = "Worker"
EVALUATOR_TYPE = "Evaluator"


def success_rule(job: Job) -> SuccessRule | None:
    """The job's success rule in force, if it has one."""
    policy = job.run_policy.lifecycle
    return None if policy is None else policy.success


def record_policy_in_force(job: Job) -> None:
    """Copy the job's lifecycle policy into its status once (D100): from then on the copy is
    what the job runs under, whatever a foreign client's full update leaves in the spec."""
    policy = job.run_policy.lifecycle
    status: JobStatus = job.status
    if policy is not None and LIFECYCLE_POLICY_FIELD not in status.extra:
        status.extra[LIFECYCLE_POLICY_FIELD] = policy.to_dict()


def stops_running_replicas(job: Job, succeeded: bool) -> bool:
    """Whether the finished job's still-running pods are deleted whatever its cleanPodPolicy:
    it succeeded under a success rule."""
    return succeeded and success_rule(job) is not None


def rule_met(
    rule: SuccessRule,
    specs: Mapping[str, ReplicaSpec],
    counts: Mapping[str, ReplicaStatus],
    worker0_completed: bool,
) -> bool:
    """Whether ``rule`` holds for these replica counts (pure)."""

    def all_succeeded(rtype: str) -> bool:
        spec, count = specs.get(rtype), counts.get(rtype)
        return spec is not None and count is not None and count.succeeded >= (spec.replicas or 0)

    if rule.rule in LEADER_RULES:
        met = any(all_succeeded(t) for t in LEADER_TYPES if t in specs)
    elif rule.rule == SUCCESS_WORKER0:
        met = WORKER_TYPE in specs and worker0_completed
    else:
        spec, count = specs.get(WORKER_TYPE), counts.get(WORKER_TYPE)
        workers = 0 if spec is None else spec.replicas or 0
        met = spec is not None and count is not None
        met = met and count is not None and count.succeeded >= rule.workers_needed(workers)
    if met and rule.wait_for_evaluators and EVALUATOR_TYPE in specs:
        met = all_succeeded(EVALUATOR_TYPE)
    return met


class SuccessPolicy(Generic[J]):
    """Decides a job's success by its rule at the end of a pass's walk."""

    def __init__(self, succeed: Callable[[SyncContext[J]], None]) -> None:
        self._succeed = succeed  # marks the job Succeeded (the status reconciler's)

    def decide(self, ctx: SyncContext[J], worker0_completed: bool) -> None:
        """Mark the job Succeeded when its rule holds (nothing for a job without one)."""
        job = ctx.job
        rule = success_rule(job)
        if rule is None or is_finished(job.status):
            return
        counts = job.status.replica_statuses or {}
        if rule_met(rule, job.replica_specs(), counts, worker0_completed):
            ctx.logger.info("%s succeeded by its success rule %s", job.name, rule.rule)
            self._succeed(ctx)
