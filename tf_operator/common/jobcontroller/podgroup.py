"""Gang scheduling: the job's PodGroup and the fields its pods need (v0.5.3 ``SyncPodGroup``).

With ``--enable-gang-scheduling`` every unfinished job has a PodGroup saying what the job asks
(:mod:`.gang_policy`: minMember, queue, priority class, minResources), created or updated on
every pass (failures only logged, as in v0.5.3), and deleted with the job's terminal clean-up
or when the job is suspended. Each new pod gets the gang scheduler's name unless its template
names another one, and what joins it to its group: for kube-batch and Volcano the
``scheduling.k8s.io/group-name`` and ``volcano.sh/task-spec`` annotations (v0.5.3 set neither
annotation, never updated the group, and dropped the scheduler for the whole job as soon as one
template named another: divergence D24), for scheduler-plugins the
``scheduling.x-k8s.io/pod-group`` label, as training-operator v1.9 does. With Kubernetes' own
gang scheduling (``--gang-scheduler-name kubernetes``, :mod:`tf_operator.control.workload_control`)
a pod keeps its scheduler and names its PodGroup in ``spec.schedulingGroup`` (D180).

A backend may hold the job's pods back until it admits the group (Volcano: until the group
leaves Pending, training-operator v1.9's Inqueue gating); the pass then creates no pod or
service, and the job says why with one Normal ``PodGroupPending`` event per wait (D62). A
PodGroup the scheduler cannot place says so in ``status.conditions`` (type ``Unschedulable``,
status True); the job then tells its user with one Warning ``PodGroupUnschedulable`` event per
change of that condition's message (divergence D40). scheduler-plugins writes no condition on
its groups: while a group is not placed, its pods' ``PodScheduled`` reason is told the same way
(D76). What no scheduler can satisfy is told on the job as it waits (its start-up watch writes
it into the Created condition, once): a ``minMember`` above the job's replicas (D156), a queue
that does not exist (kube-batch and Volcano ignore such a group silently), a group the API
server refuses (D157). The group is read from the GET the sync
makes anyway; :class:`PodGroupEvents` (an informer on the groups, with gang scheduling only)
brings the job back when a group's phase or Unschedulable message changes. Nothing here writes
a PodGroup's status (Volcano's CRD has no status subresource).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol

from tf_operator.common.jobcontroller.context import Logger, SyncContext
from tf_operator.common.jobcontroller.gang_policy import gang_policy, unsatisfiable
from tf_operator.common.jobcontroller.kind import J, JobKind, owner_reference
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.podgroup_control import (
    DEFAULT_QUEUE,
    GangPolicy,
    GangSchedulerBackend,
    group_queue,
    pod_group_phase,
    unschedulable_message,
)
from tf_operator.control.util import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, error_text
from tf_operator.k8s.cache import ResourceEventHandlerFuncs
from tf_operator.k8s.client import is_forbidden, is_invalid
from tf_operator.k8s.controller.controller_utils import unwrap_tombstone
from tf_operator.k8s.objects import Obj, meta
from tf_operator.k8s.workqueue import Queue

POD_TEMPLATE_SCHEDULER_NAME_REASON = "SettedPodTemplateSchedulerName"
POD_GROUP_UNSCHEDULABLE_REASON = "PodGroupUnschedulable"
POD_GROUP_PENDING_REASON = "PodGroupPending"
# Why a job waits on what no scheduler can satisfy (D156, D157): the Warning event's reasons.
GANG_UNSATISFIABLE_REASON = "GangUnsatisfiable"
QUEUE_NOT_FOUND_REASON = "QueueNotFound"
POD_GROUP_REFUSED_REASON = "PodGroupRefused"
# How often a job blocked by a missing queue or a refused PodGroup looks again.
RECHECK_SECONDS = 10.0


class GangMemory(Protocol):
    """What was last told on a job about its PodGroup."""

    def unschedulable_changed(self, key: str, uid: str, message: str) -> bool: ...

    def gang_wait_changed(self, key: str, uid: str, message: str) -> bool: ...


class OwnerKeys(Protocol):
    def owner_key(self, obj: Obj) -> str | None: ...


class GroupControl(Protocol):
    """Writes a job's group(s) for one backend (``PodGroupControl``, ``WorkloadControl``)."""

    backend: GangSchedulerBackend

    def sync_pod_group(self, job: Any, policy: GangPolicy, owner_ref: Obj) -> Obj: ...

    def delete_pod_group(self, job: Any) -> None: ...


def group_summary(backend: GangSchedulerBackend) -> Callable[[Obj], tuple[str, ...]]:
    """What of a group's status brings its job back when it changes: its unschedulable
    message (the backend's reading of it) and its phase."""

    def summary(group: Obj) -> tuple[str, ...]:
        told = backend.unschedulable(group, []) if backend.scheduling_group else ""
        return (unschedulable_message(group), pod_group_phase(group), told)

    return summary


class PodGroupEvents:
    """Handlers of the PodGroup informer: a group's status changed, or the group is gone (its
    job's next pass makes it again; waiting for the resync left a gang without its group for
    up to 30 s), so sync its job."""

    def __init__(
        self,
        owners: OwnerKeys,
        queue: Queue,
        summary: Callable[[Obj], tuple[str, ...]] | None = None,
    ) -> None:
        self._owners = owners
        self._queue = queue
        self._summary = summary or (lambda g: (unschedulable_message(g), pod_group_phase(g)))

    def event_handler(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(self.on_add, self.on_update, self.on_delete)

    def on_delete(self, obj: Any) -> None:
        item = unwrap_tombstone(obj)
        if item is not None:
            self._enqueue(item)

    def on_add(self, obj: Obj, is_in_initial_list: bool = False) -> None:
        if any(self._summary(obj)):
            self._enqueue(obj)

    def on_update(self, old: Obj, cur: Obj) -> None:
        if self._summary(old) != self._summary(cur):
            self._enqueue(cur)

    def _enqueue(self, obj: Obj) -> None:
        key = self._owners.owner_key(obj)
        if key is not None:
            self._queue.add(key)


class PodGroupReconciler(Generic[J]):
    """The job's PodGroup, and the decoration of its pods; see the module docstring."""

    def __init__(
        self,
        kind: JobKind[J],
        groups: GroupControl,
        recorder: EventRecorder,
        told: GangMemory,  # what was last told on each job about its group
        priority_of: Callable[[str], int],  # a PriorityClass's value (minResources)
        queue_missing: Callable[[str], bool],  # whether a scheduler's Queue is known missing
    ) -> None:
        self._kind = kind
        self._groups = groups
        self._scheduler_name = groups.backend.scheduler_name
        self._recorder = recorder
        self._told = told
        self._priority_of = priority_of
        self._queue_missing = queue_missing

    def sync(self, ctx: SyncContext[J]) -> bool:
        """Create or update the job's PodGroup, tell whether the scheduler cannot place it;
        True when the backend lets the job's pods be created. A failure is logged, not
        returned."""
        job, backend = ctx.job, self._groups.backend
        group: Obj | None = None
        try:
            policy = gang_policy(job, backend, self._priority_of)
            why = unsatisfiable(job, policy)
            if why is not None:
                ctx.blocked = (GANG_UNSATISFIABLE_REASON, why)
            group = self._groups.sync_pod_group(job, policy, owner_reference(self._kind, job))
        except Exception as err:
            ctx.logger.warning("Sync PodGroup %s: %s", job.name, err)
            self._refused(ctx, err)
        else:
            self._surface_unschedulable(ctx, group)
            self._check_queue(ctx, group)
        admitted = backend.admits(group)
        self._surface_wait(ctx, group, admitted)
        return admitted

    def _refused(self, ctx: SyncContext[J], err: Exception) -> None:
        """The API server refuses the group (kube-apiserver's Priority admission refuses a
        ``scheduling.k8s.io`` PodGroup naming a missing PriorityClass): the job is blocked until
        the refusal ends (D157)."""
        if ctx.blocked is not None or not (is_forbidden(err) or is_invalid(err)):
            return
        text = f"its PodGroup cannot be created: {error_text(err)}"
        ctx.blocked = (POD_GROUP_REFUSED_REASON, text)
        ctx.recheck_after = RECHECK_SECONDS

    def _check_queue(self, ctx: SyncContext[J], group: Obj) -> None:
        """kube-batch and Volcano leave a group whose queue does not exist out of every
        session, saying nothing (a log line at V(3)): the job says it (D157). Their
        ``default`` queue is theirs to make (Volcano's controller remakes it), not looked up."""
        queue = group_queue(group)
        if ctx.blocked is not None or queue in ("", DEFAULT_QUEUE):
            return
        if not self._queue_missing(queue):
            return
        m = meta(group)
        text = (
            f"queue {queue} of PodGroup {m.get('namespace')}/{m.get('name')} does not exist: "
            f"{self._scheduler_name} ignores the group until it does"
        )
        ctx.blocked = (QUEUE_NOT_FOUND_REASON, text)
        ctx.recheck_after = RECHECK_SECONDS

    def _surface_unschedulable(self, ctx: SyncContext[J], group: Obj) -> None:
        """One Warning event on the job per change of why its group cannot be placed (the
        group's Unschedulable condition, or for scheduler-plugins its pods' reason: D76)."""
        job, message = ctx.job, self._groups.backend.unschedulable(group, ctx.pods)
        m = meta(group)
        text = f"PodGroup {m.get('namespace')}/{m.get('name')} is unschedulable: {message}"
        ctx.gang_unschedulable = text if message else None  # told by the start-up policy (D104)
        if not self._told.unschedulable_changed(ctx.key, job.uid, message) or not message:
            return
        ctx.logger.warning(text)
        self._recorder.event(
            job.object_ref(), EVENT_TYPE_WARNING, POD_GROUP_UNSCHEDULABLE_REASON, text
        )

    def _surface_wait(self, ctx: SyncContext[J], group: Obj | None, admitted: bool) -> None:
        """One Normal event on the job each time its pods start waiting for the group."""
        job = ctx.job
        message = ""
        if not admitted:
            scheduler = self._scheduler_name
            name = f"PodGroup {job.namespace}/{job.name}"
            if group is None:
                message = f"{name} could not be read or created; the pods wait for it"
            else:
                phase = pod_group_phase(group) or "not set yet"
                message = (
                    f"{name} waits to be admitted by {scheduler} (phase {phase}); the pods are "
                    "created once it is"
                )
        ctx.gang_wait = message or None  # the job's start-up policy tells it (D104)
        if not self._told.gang_wait_changed(ctx.key, job.uid, message) or not message:
            return
        ctx.logger.info(message)
        self._recorder.event(job.object_ref(), EVENT_TYPE_NORMAL, POD_GROUP_PENDING_REASON, message)

    def delete(self, ctx: SyncContext[J]) -> None:
        self._groups.delete_pod_group(ctx.job)

    def decorate(self, job: J, template: Obj, rt: str, logger: Logger) -> None:
        """Scheduler name plus what joins the pod to its group: the group-name and task-spec
        annotations, or scheduler-plugins' pod-group label; with Kubernetes' own gang
        scheduling only ``spec.schedulingGroup`` (the pod keeps its scheduler, D180)."""
        pod_spec = template.setdefault("spec", {})
        named = self._groups.backend.scheduling_group
        if named is not None:
            pod_spec["schedulingGroup"] = {"podGroupName": named(job.name, job.uid)}
            return
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
        marks = self._groups.backend.marks(job.name, rt)
        metadata = template.setdefault("metadata", {})
        if marks.labels:
            metadata.setdefault("labels", {}).update(marks.labels)
        if marks.annotations:
            metadata.setdefault("annotations", {}).update(marks.annotations)
