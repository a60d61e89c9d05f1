"""Gang scheduling: the job's PodGroup and the fields its pods need (v0.5.3 ``SyncPodGroup``).

With ``--enable-gang-scheduling`` every unfinished job has a PodGroup whose ``minMember`` is the
job's total replica count, synced on every pass (failures only logged, as in v0.5.3), and
deleted with the job's terminal clean-up. Each new pod gets the gang scheduler's name unless its
template names another one, and the ``scheduling.k8s.io/group-name`` and
``volcano.sh/task-spec`` annotations; v0.5.3 set neither annotation and dropped the scheduler
for the whole job as soon as one template named another (divergence D24).
"""

from __future__ import annotations

import logging

from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.kind import Job, JobKind, owner_reference
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.podgroup_control import (
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_ANNOTATION,
    PodGroupControl,
)
from tf_operator.control.util import EVENT_TYPE_WARNING
from tf_operator.k8s.objects import Obj

Logger = logging.Logger | logging.LoggerAdapter[logging.Logger]

POD_TEMPLATE_SCHEDULER_NAME_REASON = "SettedPodTemplateSchedulerName"


def total_replicas(job: Job) -> int:
    return sum((s.replicas or 0) for s in job.replica_specs().values())


class PodGroupReconciler:
    """The job's PodGroup, and the decoration of its pods; see the module docstring."""

    def __init__(self, kind: JobKind, groups: PodGroupControl, recorder: EventRecorder) -> None:
        self._kind = kind
        self._groups = groups
        self._scheduler_name = groups.backend.scheduler_name
        self._recorder = recorder

    def sync(self, ctx: SyncContext) -> None:
        """Create or update the job's PodGroup; a failure is logged, not returned."""
        job = ctx.job
        try:
            self._groups.sync_pod_group(job, total_replicas(job), owner_reference(self._kind, job))
        except Exception as err:
            ctx.logger.warning("Sync PodGroup %s: %s", job.name, err)

    def delete(self, ctx: SyncContext) -> None:
        self._groups.delete_pod_group(ctx.job)

    def decorate(self, job: Job, template: Obj, rt: str, logger: Logger) -> None:
        """Scheduler name plus the group-name and task-spec annotations."""
        pod_spec = template.setdefault("spec", {})
        current = pod_spec.get("schedulerName")
        if current and current != self._scheduler_name:
            msg = (
                "Another scheduler is specified when gang-scheduling is enabled "
                "and it will not be overwritten"
            )
            logger.warning(msg)
            self._recorder.event(
                job.object_ref(), EVENT_TYPE_WARNING, POD_TEMPLATE_SCHEDULER_NAME_REASON, msg
            )
        else:
            pod_spec["schedulerName"] = self._scheduler_name
        annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[GROUP_NAME_ANNOTATION] = job.name
        annotations[TASK_SPEC_ANNOTATION] = rt
