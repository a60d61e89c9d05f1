"""Gang scheduling: the job's PodGroup and the fields its pods need (v0.5.3 ``SyncPodGroup``).

With ``--enable-gang-scheduling`` every unfinished job has a PodGroup whose ``minMember`` is the
job's total replica count, synced on every pass (failures only logged, as in v0.5.3), and
deleted with the job's terminal clean-up. Each new pod gets the gang scheduler's name unless its
template names another one, and the ``scheduling.k8s.io/group-name`` and
``volcano.sh/task-spec`` annotations; v0.5.3 set neither annotation and dropped the scheduler
for the whole job as soon as one template named another (divergence D24).

A PodGroup the scheduler cannot place says so in ``status.conditions`` (type ``Unschedulable``,
status True); the job then tells its user with one Warning ``PodGroupUnschedulable`` event per
change of that condition's message (divergence D40). The group is read from the GET the sync
makes anyway; :class:`PodGroupEvents` (an informer on the groups, with gang scheduling only)
brings the job back when a group's status changes. Nothing here writes a PodGroup's status
(Volcano's CRD has no status subresource).
"""

from __future__ import annotations

from typing import Protocol

from tf_operator.common.jobcontroller.context import Logger, SyncContext
from tf_operator.common.jobcontroller.kind import Job, JobKind, owner_reference
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.podgroup_control import (
    GROUP_NAME_ANNOTATION,
    TASK_SPEC_ANNOTATION,
    PodGroupControl,
    unschedulable_message,
)
from tf_operator.control.util import EVENT_TYPE_WARNING
from tf_operator.k8s.cache import ResourceEventHandlerFuncs
from tf_operator.k8s.objects import Obj, meta
from tf_operator.k8s.workqueue import Queue

POD_TEMPLATE_SCHEDULER_NAME_REASON = "SettedPodTemplateSchedulerName"
POD_GROUP_UNSCHEDULABLE_REASON = "PodGroupUnschedulable"


class UnschedulableMemory(Protocol):
    def unschedulable_changed(self, key: str, uid: str, message: str) -> bool: ...


class OwnerKeys(Protocol):
    def owner_key(self, obj: Obj) -> str | None: ...


class PodGroupEvents:
    """Handlers of the PodGroup informer: a group's status changed, so sync its job."""

    def __init__(self, owners: OwnerKeys, queue: Queue) -> None:
        self._owners = owners
        self._queue = queue

    def event_handler(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(self.on_add, self.on_update, lambda obj: None)

    def on_add(self, obj: Obj, is_in_initial_list: bool = False) -> None:
        if unschedulable_message(obj):
            self._enqueue(obj)

    def on_update(self, old: Obj, cur: Obj) -> None:
        if unschedulable_message(old) != unschedulable_message(cur):
            self._enqueue(cur)

    def _enqueue(self, obj: Obj) -> None:
        key = self._owners.owner_key(obj)
        if key is not None:
            self._queue.add(key)


def total_replicas(job: Job) -> int:
    return sum((s.replicas or 0) for s in job.replica_specs().values())


class PodGroupReconciler:
    """The job's PodGroup, and the decoration of its pods; see the module docstring."""

    def __init__(
        self,
        kind: JobKind,
        groups: PodGroupControl,
        recorder: EventRecorder,
        surfaced: UnschedulableMemory,  # the last Unschedulable message told, per job
    ) -> None:
        self._kind = kind
        self._groups = groups
        self._scheduler_name = groups.backend.scheduler_name
        self._recorder = recorder
        self._surfaced = surfaced

    def sync(self, ctx: SyncContext) -> None:
        """Create or update the job's PodGroup, then tell whether the scheduler cannot place
        it; a failure is logged, not returned."""
        job = ctx.job
        try:
            group = self._groups.sync_pod_group(
                job, total_replicas(job), owner_reference(self._kind, job)
            )
        except Exception as err:
            ctx.logger.warning("Sync PodGroup %s: %s", job.name, err)
            return
        self._surface_unschedulable(ctx, group)

    def _surface_unschedulable(self, ctx: SyncContext, group: Obj) -> None:
        """One Warning event on the job per change of the group's Unschedulable message."""
        job, message = ctx.job, unschedulable_message(group)
        if not self._surfaced.unschedulable_changed(ctx.key, job.uid, message) or not message:
            return
        m = meta(group)
        text = f"PodGroup {m.get('namespace')}/{m.get('name')} is unschedulable: {message}"
        ctx.logger.warning(text)
        self._recorder.event(
            job.object_ref(), EVENT_TYPE_WARNING, POD_GROUP_UNSCHEDULABLE_REASON, text
        )

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
