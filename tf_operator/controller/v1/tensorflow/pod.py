"""Reconciling the pods of one replica type, and building a new pod (spec §3.5, §5.5).

For each index ``0..replicas-1`` exactly one pod should exist. A missing pod is created (the
pods-creation expectation is raised first and lowered again if the create fails for any reason
but a timeout, spec §10 #3). A pod under the ExitCode policy that failed with a retryable exit
code is deleted so the next pass recreates it.

Extra pods are deleted, which v0.5.3 never did (spec §10 #22): when an index has several pods,
one is kept and counted (not terminating, preferably named as the controller names it, then
the oldest) and the others are deleted; pods whose index is outside ``[0, replicas)`` (after a
scale-down) are deleted too.

Worker 0 counts as completed when its ``tensorflow`` container terminated with exit code 0
(v0.5.3's rule, which lets sidecars keep the pod Running) or when the pod phase is Succeeded
(v0.5.3 missed that case, spec §10 #23).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from tf_operator.apis.common.v1.types import RESTART_POLICY_EXIT_CODE, ReplicaSpec
from tf_operator.apis.tensorflow.v1.constants import DEFAULT_CONTAINER_NAME
from tf_operator.apis.tensorflow.v1.types import (
    TFJob,
    contains_chief_or_master_spec,
    is_chief_or_master,
    is_worker,
)
from tf_operator.common.jobcontroller.pod import out_of_range
from tf_operator.common.jobcontroller.util import (
    gen_expectation_pods_key,
    gen_general_name,
    job_key,
    meta,
)
from tf_operator.control.podgroup_control import GROUP_NAME_ANNOTATION, TASK_SPEC_ANNOTATION
from tf_operator.control.util import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING
from tf_operator.controller.v1.tensorflow.context import ReconcileContext
from tf_operator.controller.v1.tensorflow.status import (
    initialize_replica_statuses,
    update_replica_statuses,
)
from tf_operator.controller.v1.tensorflow.tensorflow import set_cluster_spec
from tf_operator.k8s.client import is_timeout
from tf_operator.logger import logger_for_replica

POD_TEMPLATE_RESTART_POLICY_REASON = "SettedPodTemplateRestartPolicy"
EXITED_WITH_CODE_REASON = "ExitedWithCode"
POD_TEMPLATE_SCHEDULER_NAME_REASON = "SettedPodTemplateSchedulerName"

# v0.5.3's "no exit code seen" sentinel (0xbeef); it is never retryable.
NO_EXIT_CODE = 0xBEEF

_PERMANENT_EXIT_CODES = frozenset({1, 2, 126, 127, 128, 139})
_RETRYABLE_EXIT_CODES = frozenset({130, 137, 143, 138})


def is_retryable_exit_code(exit_code: int) -> bool:
    """v0.5.3's explicit list: 130/137/143 (SIGINT/SIGKILL/SIGTERM) and 138 (SIGUSR1) retry."""
    if exit_code in _PERMANENT_EXIT_CODES:
        return False
    return exit_code in _RETRYABLE_EXIT_CODES


def set_restart_policy(template: dict, spec: ReplicaSpec) -> None:
    """Pod restartPolicy from the replica spec; ExitCode runs as Never (the operator restarts)."""
    pod_spec = template.setdefault("spec", {})
    if spec.restart_policy == RESTART_POLICY_EXIT_CODE:
        pod_spec["restartPolicy"] = "Never"
    else:
        pod_spec["restartPolicy"] = spec.restart_policy


def tensorflow_exit_code(pod: dict) -> int:
    """Exit code of the terminated ``tensorflow`` container, else NO_EXIT_CODE."""
    exit_code = NO_EXIT_CODE
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (cs.get("state") or {}).get("terminated")
        if cs.get("name") == DEFAULT_CONTAINER_NAME and terminated is not None:
            exit_code = int(terminated.get("exitCode", 0))
    return exit_code


def _phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase", "")


def _keep_first_key(pod: dict, expected_name: str) -> tuple[bool, bool, str, str]:
    """Sort key putting the pod to keep first: not terminating, named as the controller
    names it, oldest, then by name."""
    m = meta(pod)
    return (
        bool(m.get("deletionTimestamp")),
        m.get("name") != expected_name,
        m.get("creationTimestamp") or "",
        m.get("name") or "",
    )


@dataclass
class _Tally:
    """What one replica type's pass learned, for ``update_status_single``."""

    restarting: int = 0  # failed pods being recreated under ExitCode
    new_restarts: int = 0  # of those, deleted by this pass
    worker0_completed: bool = False


class PodReconcilerMixin:
    """Pod reconciliation of :class:`TFController`."""

    def reconcile_pods(
        self, ctx: ReconcileContext, job: TFJob, pods: list[dict], rtype: str, spec: ReplicaSpec
    ) -> None:
        rt = rtype.lower()
        logger = logger_for_replica({"metadata": job.metadata}, rt)
        pods = self.filter_pods_for_replica_type(pods, rt)
        replicas = spec.replicas or 0
        initialize_replica_statuses(job, rtype)
        tally = _Tally()

        for pod in out_of_range(pods, replicas, self.get_replica_index_label_key()):
            logger.info("Deleting pod %s: its index is out of range", meta(pod).get("name"))
            self._collect(ctx, self.delete_pod_expecting, job, pod)

        for index, pod_slice in enumerate(self.get_pod_slices(pods, replicas, logger)):
            if len(pod_slice) > 1:
                logger.warning("We have too many pods for %s %d", rt, index)
                pod_slice = self._delete_duplicates(ctx, job, rt, index, pod_slice)
            if pod_slice:
                self._reconcile_existing_pod(ctx, job, pod_slice[0], rtype, index, spec, tally)
                continue
            logger.info("Need to create new pod: %s-%d", rt, index)
            if contains_chief_or_master_spec(job):
                master_role = is_chief_or_master(rtype)
            else:
                master_role = is_worker(rtype) and index == 0
            self._collect(ctx, self.create_new_pod, job, rt, str(index), spec, master_role)

        self.update_status_single(
            ctx, job, rtype, replicas, tally.restarting, tally.new_restarts, tally.worker0_completed
        )

    def _delete_duplicates(
        self, ctx: ReconcileContext, job: TFJob, rt: str, index: int, pod_slice: list[dict]
    ) -> list[dict]:
        """Keep one pod of an index (see the module docstring), delete the others."""
        expected_name = gen_general_name(job.name, rt, index)
        ordered = sorted(pod_slice, key=lambda p: _keep_first_key(p, expected_name))
        for extra in ordered[1:]:
            self._collect(ctx, self.delete_pod_expecting, job, extra)
        return ordered[:1]

    def _reconcile_existing_pod(
        self,
        ctx: ReconcileContext,
        job: TFJob,
        pod: dict,
        rtype: str,
        index: int,
        spec: ReplicaSpec,
        tally: _Tally,
    ) -> None:
        """Exit code, ExitCode-policy restart, worker-0 completion and counting of one pod."""
        logger = logger_for_replica({"metadata": job.metadata}, rtype.lower())
        exit_code = tensorflow_exit_code(pod)
        if exit_code != NO_EXIT_CODE:
            self.report_exit_code(job, pod, exit_code, logger)
        if (
            spec.restart_policy == RESTART_POLICY_EXIT_CODE
            and _phase(pod) == "Failed"
            and is_retryable_exit_code(exit_code)
        ):
            tally.restarting += 1
            # A pod already terminating was restarted by an earlier pass.
            if not meta(pod).get("deletionTimestamp"):
                m = meta(pod)
                logger.info("Need to restart the pod: %s.%s", m.get("namespace"), m.get("name"))
                if self._collect(ctx, self.delete_pod_expecting, job, pod):
                    tally.new_restarts += 1
                    self.record_recreation(job)
        if is_worker(rtype) and index == 0 and (exit_code == 0 or _phase(pod) == "Succeeded"):
            tally.worker0_completed = True
        update_replica_statuses(job, rtype, pod)

    @staticmethod
    def _collect(ctx: ReconcileContext, step: Any, *args: Any) -> Any:
        """Run one create/delete; a failure is kept in ``ctx`` and the pass goes on (#28)."""
        try:
            return step(*args)
        except Exception as err:
            ctx.errors.append(err)
            return None

    def report_exit_code(self, job: TFJob, pod: dict, exit_code: int, logger: Any) -> None:
        """Log and record ``ExitedWithCode`` once per pod and exit code.

        v0.5.3 recorded it on every reconcile while the pod existed (spec §7.1).
        """
        m = meta(pod)
        msg = f"Pod: {m.get('namespace')}.{m.get('name')} exited with code {exit_code}"
        seen = self.reported_exit_codes.setdefault(job_key(job), set())
        marker = (m.get("uid", m.get("name")), exit_code)
        if marker in seen:
            return
        seen.add(marker)
        logger.info(msg)
        self.recorder.event(job.object_ref(), EVENT_TYPE_NORMAL, EXITED_WITH_CODE_REASON, msg)

    def create_new_pod(
        self, job: TFJob, rt: str, index: str, spec: ReplicaSpec, master_role: bool
    ) -> None:
        exp_key = gen_expectation_pods_key(job_key(job), rt)
        logger = logger_for_replica({"metadata": job.metadata}, rt)
        labels = self.gen_labels(job.name)
        labels[self.get_replica_type_label_key()] = rt
        labels[self.get_replica_index_label_key()] = index
        if master_role:
            labels[self.get_job_role_key()] = "master"

        template = copy.deepcopy(spec.template)
        tmeta = template.setdefault("metadata", {})
        tmeta["name"] = gen_general_name(job.name, rt, index)
        tmeta["labels"] = {**(tmeta.get("labels") or {}), **labels}
        set_cluster_spec(template, job, rt, index)
        if (template.get("spec") or {}).get("restartPolicy"):
            msg = "Restart policy in pod template will be overwritten by restart policy in replica spec"
            logger.warning(msg)
            self.recorder.event(
                job.object_ref(), EVENT_TYPE_WARNING, POD_TEMPLATE_RESTART_POLICY_REASON, msg
            )
        set_restart_policy(template, spec)
        if self.config.enable_gang_scheduling:
            self.decorate_for_gang_scheduling(job, template, rt, logger)

        self.expectations.expect_creations(exp_key, 1)
        try:
            self.pod_control.create_pods_with_controller_ref(
                job.namespace, template, job, self.gen_owner_reference(job)
            )
        except Exception as err:
            if is_timeout(err):
                # The pod may still be created; its informer event will lower the count.
                return
            self.expectations.creation_observed(exp_key)
            raise

    def decorate_for_gang_scheduling(
        self, job: TFJob, template: dict, rt: str, logger: Any
    ) -> None:
        """Scheduler name plus the group-name and task-spec annotations (spec §8.4, §11).

        v0.5.3 skipped the scheduler for every pod of the job as soon as one template named
        another scheduler, and set no annotations (spec §10 #25); here the check is per pod.
        """
        scheduler = self.pod_group_control.backend.scheduler_name
        pod_spec = template.setdefault("spec", {})
        current = pod_spec.get("schedulerName")
        if current and current != scheduler:
            msg = (
                "Another scheduler is specified when gang-scheduling is enabled "
                "and it will not be overwritten"
            )
            logger.warning(msg)
            self.recorder.event(
                job.object_ref(), EVENT_TYPE_WARNING, POD_TEMPLATE_SCHEDULER_NAME_REASON, msg
            )
        else:
            pod_spec["schedulerName"] = scheduler
        annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[GROUP_NAME_ANNOTATION] = job.name
        annotations[TASK_SPEC_ANNOTATION] = rt
