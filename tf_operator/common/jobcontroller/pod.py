"""Reconciling the pods of one replica type, and building a new pod (v0.5.3 ``pod.go``).

Exactly one pod per index ``0..replicas-1``: a missing pod is created under a creation
expectation (lowered again when the create fails, D3); extra pods of an index (keeping the
one not terminating, named as we name it, oldest) and pods of an index out of range are
deleted (D21). Creation stops at the pass's budget (D38); the creates run in slow-start
batches that end at the first failure (D46). A pod under the ExitCode policy that failed with
a retryable code is recreated: its failure is counted in ``status.exitCodeRestarts`` by pod
UID, and the controller deletes it only after that status is written
(:meth:`PodReconciler.restart_recorded`), so a crash neither loses nor repeats a count (D11);
"restarting" is decided per pod (D12). Which exit codes are retryable and when index 0 has
completed (exit code 0 of the default container or phase Succeeded, D22) follow the job's
defaults: v0.5.3's unless it asked for v1.9's (D57, D58). ``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic

from tf_operator.apis.common.v1.types import (
    RESTART_POLICY_EXIT_CODE,
    ExitCodeRestarts,
    ReplicaSpec,
    ReplicaStatus,
)
from tf_operator.common.jobcontroller.context import Logger, SyncContext
from tf_operator.common.jobcontroller.failure_policy import judge_pod
from tf_operator.common.jobcontroller.kind import (
    J,
    Job,
    JobKind,
    PodEnv,
    owner_reference,
    replica_labels,
    replica_type_selector,
)
from tf_operator.common.jobcontroller.memory import JobMemory
from tf_operator.common.jobcontroller.owned import OwnedObjects
from tf_operator.common.jobcontroller.podgroup import PodGroupReconciler
from tf_operator.common.jobcontroller.startup import holds_back
from tf_operator.common.jobcontroller.util import gen_general_name
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.pod_control import PodControlInterface
from tf_operator.control.util import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING
from tf_operator.k8s.objects import Obj, json_copy, meta
from tf_operator.logger import logger_for_replica

POD_TEMPLATE_RESTART_POLICY_REASON = "SettedPodTemplateRestartPolicy"
EXITED_WITH_CODE_REASON = "ExitedWithCode"

# v0.5.3's "no exit code seen" sentinel (0xbeef); v0.5.3's list never retries it, v1.9's
# rule (>= 128) does, as v1.9 itself did for a Failed pod that reported no exit code.
NO_EXIT_CODE = 0xBEEF


def set_restart_policy(template: Obj, spec: ReplicaSpec) -> None:
    """Pod restartPolicy from the replica spec; ExitCode runs as Never (the operator restarts)."""
    pod_spec = template.setdefault("spec", {})
    if spec.restart_policy == RESTART_POLICY_EXIT_CODE:
        pod_spec["restartPolicy"] = "Never"
    else:
        pod_spec["restartPolicy"] = spec.restart_policy


def container_exit_code(pod: Obj, container_name: str) -> int:
    """Exit code of the terminated container ``container_name``, else NO_EXIT_CODE."""
    exit_code = NO_EXIT_CODE
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (cs.get("state") or {}).get("terminated")
        if cs.get("name") == container_name and terminated is not None:
            exit_code = int(terminated.get("exitCode", 0))
    return exit_code


def phase_of(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase", ""))


def pod_uid(pod: Obj) -> str:
    """What a pod's exit report and failure count are kept under (its name without a uid)."""
    return str(meta(pod).get("uid") or meta(pod).get("name", ""))


@dataclass
class ReplicaTally:
    """What one replica type's pass learned about its pods (input of the status rules)."""

    restarting: int = 0  # failed pods being recreated (ExitCode, a failure policy)
    new_restarts: int = 0  # of those, recorded by this pass
    index0_completed: bool = False
    fail_message: str | None = None  # a failure rule fails the job (D102)
    restart_job: bool = False  # a failure rule restarts every replica (D103)


class PodReconciler(Generic[J]):
    """Pods of one replica type per call; see the module docstring."""

    def __init__(
        self,
        kind: JobKind[J],
        pods: OwnedObjects[J],
        control: PodControlInterface,
        recorder: EventRecorder,
        exit_reports: JobMemory,  # which exit codes were announced already
        gang: PodGroupReconciler[J] | None = None,  # decorates pods for the gang scheduler
    ) -> None:
        self._kind = kind
        self._pods = pods
        self._control = control
        self._recorder = recorder
        self._exit_reports = exit_reports
        self._gang = gang

    def reconcile(self, ctx: SyncContext[J], rtype: str, spec: ReplicaSpec) -> ReplicaTally:
        job, rt = ctx.job, rtype.lower()
        logger = logger_for_replica({"metadata": job.metadata}, rt, self._kind.resource.kind)
        reset_counts(job, rtype)
        if self._kind.writes_replica_selector:
            counts = (job.status.replica_statuses or {})[rtype]
            counts.selector = replica_type_selector(self._kind, job.name, rt)
        tally = ReplicaTally()

        def observe(index: int, pod: Obj) -> None:
            self._observe(ctx, pod, rtype, index, spec, tally, logger)

        def create(index: int) -> None:
            master_role = self._kind.is_master_role(job, rtype, index)
            self.create_new_pod(job, rt, index, spec, master_role, env)

        if ctx.pod_env is None:
            ctx.pod_env = self._kind.cluster_env(job)
        env = ctx.pod_env

        replicas = spec.replicas or 0
        held = holds_back(ctx, rtype, self._kind.labels.replica_type)  # ordered start (D105)
        self._pods.reconcile_indices(
            ctx, ctx.pods, rt, replicas, logger, create, observe, may_create=not held
        )
        return tally

    def restart_recorded(self, ctx: SyncContext[J]) -> None:
        """Delete the failed pods whose failure the written status now records."""
        for pod in ctx.restarts:
            ctx.collect(self._pods.delete, ctx.job, pod)
        ctx.restarts.clear()

    def _observe(
        self,
        ctx: SyncContext[J],
        pod: Obj,
        rtype: str,
        index: int,
        spec: ReplicaSpec,
        tally: ReplicaTally,
        logger: Logger,
    ) -> None:
        """Exit code, ExitCode-policy restart, index-0 completion and counting of one pod."""
        exit_code = container_exit_code(pod, self._kind.default_container_name)
        if exit_code != NO_EXIT_CODE:
            self._report_exit_code(ctx, pod, exit_code, logger)
        phase = phase_of(pod)
        defaults = ctx.job.run_policy.defaults
        code = None if exit_code == NO_EXIT_CODE else exit_code
        retryable = spec.restart_policy == RESTART_POLICY_EXIT_CODE and (
            defaults.is_retryable_exit_code(exit_code)
        )
        if judge_pod(ctx, rtype, pod, code, phase, tally, retryable):
            pass  # the job's failure policy decided (D102, D103)
        elif (
            spec.restart_policy == RESTART_POLICY_EXIT_CODE
            and phase == "Failed"
            and defaults.is_retryable_exit_code(exit_code)
        ):
            tally.restarting += 1
            # A pod already terminating was restarted by an earlier pass.
            if not meta(pod).get("deletionTimestamp"):
                m = meta(pod)
                logger.info("Need to restart the pod: %s.%s", m.get("namespace"), m.get("name"))
                if self._record_failure(ctx.job, pod):
                    tally.new_restarts += 1
                ctx.restarts.append(pod)
        if index == 0 and defaults.index0_completed(exit_code, phase):
            tally.index0_completed = True
        count_pod(ctx.job, rtype, phase)

    @staticmethod
    def _record_failure(job: Job, pod: Obj) -> bool:
        """Count the pod's failure in the job's status; False if it was counted before."""
        if job.status.exit_code_restarts is None:
            job.status.exit_code_restarts = ExitCodeRestarts()
        return job.status.exit_code_restarts.record(pod_uid(pod))

    def _report_exit_code(
        self, ctx: SyncContext[J], pod: Obj, exit_code: int, logger: Logger
    ) -> None:
        """Log and record ``ExitedWithCode`` once per pod and exit code.

        v0.5.3 recorded it on every reconcile while the pod existed (divergence D31).
        """
        if not self._exit_reports.first_report(ctx.key, pod_uid(pod), exit_code):
            return
        m = meta(pod)
        msg = f"Pod: {m.get('namespace')}.{m.get('name')} exited with code {exit_code}"
        logger.info(msg)
        self._recorder.event(ctx.job.object_ref(), EVENT_TYPE_NORMAL, EXITED_WITH_CODE_REASON, msg)

    def create_new_pod(
        self, job: J, rt: str, index: int, spec: ReplicaSpec, master_role: bool, env: PodEnv
    ) -> None:
        logger = logger_for_replica({"metadata": job.metadata}, rt, self._kind.resource.kind)
        labels = replica_labels(self._kind, job.name, rt, index, master_role)

        template = json_copy(spec.template)
        tmeta = template.setdefault("metadata", {})
        tmeta["name"] = gen_general_name(job.name, rt, index)
        tmeta["labels"] = {**(tmeta.get("labels") or {}), **labels}
        env(template, rt, index)
        if (template.get("spec") or {}).get("restartPolicy"):
            msg = "Restart policy in pod template will be overwritten by restart policy in replica spec"
            logger.warning(msg)
            self._recorder.event(
                job.object_ref(), EVENT_TYPE_WARNING, POD_TEMPLATE_RESTART_POLICY_REASON, msg
            )
        set_restart_policy(template, spec)
        if self._gang is not None:
            self._gang.decorate(job, template, rt, logger)

        self._control.create_pods_with_controller_ref(
            job.namespace, template, job, owner_reference(self._kind, job)
        )


def reset_counts(job: Job, rtype: str) -> None:
    """Start ``status.replicaStatuses[rtype]`` from zero (every pass recounts the pods)."""
    if job.status.replica_statuses is None:
        job.status.replica_statuses = {}
    job.status.replica_statuses[rtype] = ReplicaStatus()


def count_pod(job: Job, rtype: str, phase: str) -> None:
    """Count one pod into ``status.replicaStatuses[rtype]`` by its phase."""
    counts = (job.status.replica_statuses or {})[rtype]
    if phase == "Running":
        counts.active += 1
    elif phase == "Succeeded":
        counts.succeeded += 1
    elif phase == "Failed":
        counts.failed += 1
