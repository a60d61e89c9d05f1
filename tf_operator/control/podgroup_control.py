"""PodGroups for gang scheduling: what a job asks of its group, and the backends that write it.

:class:`GangPolicy` is what a job asks of its PodGroup, computed once per pass whatever the
backend (minMember, queue, priority class, minResources, schedule timeout: training-operator
v1.9's ``schedulingPolicy``). A :class:`GangSchedulerBackend` says which API its groups live in,
which spec fields it writes from the policy (``spec_for``), whether it needs ``minResources``
computed, and whether pods must wait for the scheduler to admit the group (``admits``). The
backend also says how a pod joins its group (``marks``: kube-batch and Volcano read the
``scheduling.k8s.io/group-name`` annotation, ``volcano.sh/task-spec`` names the task;
scheduler-plugins reads the ``scheduling.x-k8s.io/pod-group`` label) and how a group that cannot
be placed is told (``unschedulable``: kube-batch and Volcano write an ``Unschedulable``
condition on the group; scheduler-plugins writes none, its pods' ``PodScheduled`` conditions
carry kube-scheduler's reason).

v0.5.3 only knew kube-batch (``scheduling.incubator.k8s.io/v1alpha1``) and wrote only
``minMember``; its PodGroups keep exactly that unless the job's ``schedulingPolicy`` asks for a
queue or a priority class. Volcano (``scheduling.volcano.sh/v1beta1``) gets v1.9's spec: queue
``default`` unless named, the priority class, and ``minResources``, computed when unset. A
group's existing queue is never changed (v1.9; the job's queue is immutable).

scheduler-plugins (``scheduling.x-k8s.io/v1alpha1``, training-operator v1.9's default gang
backend) gets v1.9's spec: ``minMember``, ``minResources`` (computed when unset) and
``scheduleTimeoutSeconds``. ``--gang-scheduler-name=scheduler-plugins`` gives its pods the
scheduler name its chart serves, ``scheduler-plugins-scheduler``, where v1.9 wrote
``scheduler-plugins`` itself (D75); any other name but ``kube-batch`` and ``volcano`` is a
scheduler-plugins profile of that name, as in v1.9.

Fixes over v0.5.3 (divergence D24): only a 404 leads to a create (v0.5.3 created on any GET
error), and an existing group whose fields differ from the policy is patched (v0.5.3 never
updated it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tf_operator.control.object_control import EventRecorder
from tf_operator.control.util import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    error_text,
    event_object,
    job_logger,
    meta,
)
from tf_operator.k8s.client import KubeInterface, Resource, is_not_found
from tf_operator.k8s.objects import Obj
from tf_operator.k8s.quantity import Quantity, QuantityError

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
SCHEDULER_PLUGINS = "scheduler-plugins"
# The scheduler name scheduler-plugins' chart gives its coscheduling profile (D75).
SCHEDULER_PLUGINS_SCHEDULER_NAME = "scheduler-plugins-scheduler"
SUCCESSFUL_DELETE_POD_GROUP_REASON = "SuccessfulDeletePodGroup"
FAILED_DELETE_POD_GROUP_REASON = "FailedDeletePodGroup"
DEFAULT_QUEUE = "default"
# Phases in which a PodGroup's Unschedulable condition is current: kube-batch and Volcano
# never remove a stale one.
_UNPLACED_PHASES = ("Pending", "Inqueue", "Unknown")
# scheduler-plugins' phases of a group whose gang was placed
_PLACED_PHASES = ("Running", "Finished", "Failed")
# kube-scheduler's texts for a pod rejected because a sibling was
_ECHOES = ("rejection in Unreserve.", "optimistic rejection in PostFilter.")


@dataclass(frozen=True)
class GangPolicy:
    """What a job asks of its PodGroup (training-operator v1.9's ``schedulingPolicy``, with
    its defaults), whatever the backend."""

    min_member: int
    queue: str = ""  # "" when the job names none
    priority_class_name: str = ""
    # resource name -> quantity; None when unset and the backend computes none
    min_resources: dict[str, Any] | None = None
    schedule_timeout_seconds: int | None = None
    # Volcano's minTaskMember: task name (volcano.sh/task-spec) -> minimum; None when not asked
    min_task_member: dict[str, int] | None = None


def _existing_queue(current: Obj | None) -> str:
    queue = (current or {}).get("queue")
    return queue if isinstance(queue, str) else ""


def kube_batch_spec(policy: GangPolicy, current: Obj | None) -> Obj:
    """kube-batch v1alpha1: v0.5.3's ``minMember``; a queue and priority class when asked."""
    return {
        "minMember": policy.min_member,
        "queue": _existing_queue(current) or policy.queue or None,
        "priorityClassName": policy.priority_class_name or None,
    }


def volcano_spec(policy: GangPolicy, current: Obj | None) -> Obj:
    """Volcano v1beta1, as training-operator v1.9 fills it, and ``minTaskMember`` when the
    job asks for per-task minimums (D77)."""
    return {
        "minMember": policy.min_member,
        "queue": _existing_queue(current) or policy.queue or DEFAULT_QUEUE,
        "priorityClassName": policy.priority_class_name or None,
        "minResources": policy.min_resources,
        "minTaskMember": policy.min_task_member or None,
    }


def scheduler_plugins_spec(policy: GangPolicy, current: Obj | None) -> Obj:
    """scheduler-plugins v1alpha1, as training-operator v1.9 fills it (an empty minResources
    is left out, as its omitempty field is)."""
    return {
        "minMember": policy.min_member,
        "minResources": policy.min_resources or None,
        "scheduleTimeoutSeconds": policy.schedule_timeout_seconds,
    }


@dataclass(frozen=True)
class PodMarks:
    """What joins a pod to its group: labels and annotations added to its template."""

    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)


def annotation_marks(job_name: str, task: str) -> PodMarks:
    """kube-batch and Volcano: the group-name annotation and the task's name (D24)."""
    return PodMarks(annotations={GROUP_NAME_ANNOTATION: job_name, TASK_SPEC_ANNOTATION: task})


def label_marks(job_name: str, task: str) -> PodMarks:
    """scheduler-plugins: the pod-group label (training-operator v1.9 sets nothing else)."""
    return PodMarks(labels={POD_GROUP_LABEL: job_name})


def group_condition_message(group: Obj | None, pods: list[Obj]) -> str:
    """kube-batch and Volcano tell it on the group (D40)."""
    return unschedulable_message(group)


def volcano_admits(group: Obj | None) -> bool:
    """v1.9's Inqueue gating: pods are created once Volcano moved the group past Pending."""
    return pod_group_phase(group) not in ("", "Pending")


@dataclass(frozen=True)
class GangSchedulerBackend:
    """A gang scheduler: the scheduler name pods get, the PodGroup API, and its spec."""

    scheduler_name: str
    pod_groups: Resource
    # the spec fields the backend writes, from the policy and the group's spec as it is (None
    # for a new group); a None value means "absent"
    spec_for: Callable[[GangPolicy, Obj | None], Obj] = field(default=kube_batch_spec)
    # whether the policy's minResources are computed when the job names none
    computes_min_resources: bool = False
    # whether pods may be created for a job whose group is this one (None: none could be
    # read or created)
    admits: Callable[[Obj | None], bool] = field(default=lambda group: True)
    # the labels and annotations that join a pod (job name, task name) to its group
    marks: Callable[[str, str], PodMarks] = field(default=annotation_marks)
    # why the group cannot be placed ("" when it is not known to be unplaceable), from the
    # group and the job's pods
    unschedulable: Callable[[Obj | None, list[Obj]], str] = field(default=group_condition_message)
    # Kubernetes' own gang scheduling: the PodGroup a pod names in spec.schedulingGroup, from
    # the job's name and UID (None: the pod names none); such a backend sets no schedulerName
    scheduling_group: Callable[[str, str], str] | None = None
    # the scheduler's cluster-scoped Queues, whose group naming a missing one it ignores
    # (kube-batch, Volcano); None: the backend has no queues
    queues: Resource | None = None

    @property
    def api_version(self) -> str:
        return f"{self.pod_groups.group}/{self.pod_groups.version}"


KUBE_BATCH = GangSchedulerBackend(
    "kube-batch",
    Resource("scheduling.incubator.k8s.io", "v1alpha1", "podgroups", "PodGroup"),
    queues=Resource("scheduling.incubator.k8s.io", "v1alpha1", "queues", "Queue", False),
)
VOLCANO = GangSchedulerBackend(
    "volcano",
    Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup"),
    spec_for=volcano_spec,
    computes_min_resources=True,
    admits=volcano_admits,
    queues=Resource("scheduling.volcano.sh", "v1beta1", "queues", "Queue", False),
)


def group_queue(group: Obj | None) -> str:
    """The queue a PodGroup names ("" when none, or there is no group)."""
    spec = group.get("spec") if isinstance(group, dict) else None
    return _existing_queue(spec if isinstance(spec, dict) else None)


def waiting_pods_message(group: Obj | None, pods: list[Obj]) -> str:
    """Why a scheduler-plugins gang waits (D76): its group is not placed (``Running`` or
    finished) and a pod says why it is not scheduled. The root cause is told, not its echoes: a
    pod rejected only because a sibling was (``rejection in Unreserve``, ``optimistic rejection
    in PostFilter``) speaks only when no pod gives another reason; among equals, the first by
    name."""
    if group is None or pod_group_phase(group) in _PLACED_PHASES:
        return ""
    reasons: list[tuple[bool, str, str]] = []
    for pod in pods:
        message = pod_scheduled_message(pod)
        if message:
            reasons.append((message.endswith(_ECHOES), str(meta(pod).get("name") or ""), message))
    return min(reasons)[2] if reasons else ""


def pod_scheduled_message(pod: Obj) -> str:
    """The message of a pod's ``PodScheduled=False`` condition ("" when it has none)."""
    return condition_message(pod.get("status"), "PodScheduled", "False")


def condition_message(status: Any, ctype: str, value: str) -> str:
    """The message of the condition of type ``ctype`` and status ``value`` in ``status`` (an
    object's status), "" when there is none."""
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if (
            isinstance(condition, dict)
            and condition.get("type") == ctype
            and condition.get("status") == value
        ):
            return str(condition.get("message") or "")
    return ""


SCHEDULER_PLUGINS_BACKEND = GangSchedulerBackend(
    SCHEDULER_PLUGINS_SCHEDULER_NAME,
    Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup"),
    spec_for=scheduler_plugins_spec,
    computes_min_resources=True,
    marks=label_marks,
    unschedulable=waiting_pods_message,
)


def backend_for(scheduler_name: str) -> GangSchedulerBackend:
    """``kube-batch`` (or nothing) and ``volcano`` select theirs; ``scheduler-plugins`` selects
    scheduler-plugins under its chart's scheduler name (D75); any other name is a
    scheduler-plugins profile of that name, as in training-operator v1.9."""
    if scheduler_name == VOLCANO.scheduler_name:
        return VOLCANO
    if scheduler_name in ("", KUBE_BATCH.scheduler_name):
        return KUBE_BATCH
    if scheduler_name == SCHEDULER_PLUGINS:
        return SCHEDULER_PLUGINS_BACKEND
    return replace(SCHEDULER_PLUGINS_BACKEND, scheduler_name=scheduler_name)


def _same(current: Any, wanted: Any) -> bool:
    """Whether a spec field already says what the policy wants (quantities by value)."""
    if isinstance(current, dict) and isinstance(wanted, dict) and current.keys() == wanted.keys():
        try:
            return all(
                Quantity.parse(current[k]).value == Quantity.parse(v).value
                for k, v in wanted.items()
            )
        except QuantityError:
            pass
    return bool(current == wanted)


class PodGroupControl:
    """Create/update and delete the PodGroup of a job."""

    def __init__(
        self, kube_client: KubeInterface, recorder: EventRecorder, backend: GangSchedulerBackend
    ) -> None:
        self.backend = backend
        self._groups = kube_client.resource(backend.pod_groups)
        self.recorder = recorder

    def sync_pod_group(self, job: Any, policy: GangPolicy, owner_ref: Obj) -> Obj:
        """Make sure the job's PodGroup exists and says what ``policy`` asks."""
        m = meta(job)
        name, namespace = m.get("name", ""), m.get("namespace", "")
        try:
            group = self._groups.get(name, namespace=namespace)
        except Exception as err:
            if not is_not_found(err):
                raise
            spec = self.backend.spec_for(policy, None)
            body = {
                "apiVersion": self.backend.api_version,
                "kind": "PodGroup",
                "metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner_ref]},
                "spec": {k: v for k, v in spec.items() if v is not None},
            }
            return self._groups.create(body, namespace=namespace)
        spec_now = group.get("spec")
        current: Obj = spec_now if isinstance(spec_now, dict) else {}
        changed = {
            k: v
            for k, v in self.backend.spec_for(policy, current).items()
            if not _same(current.get(k), v)
        }
        if changed:  # a merge patch: None removes a field
            return self._groups.patch(name, {"spec": changed}, namespace=namespace)
        return group

    def delete_pod_group(self, job: Any) -> None:
        m = meta(job)
        name, namespace = m.get("name", ""), m.get("namespace", "")
        try:
            self._groups.get(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return
            raise
        delete_told(self.recorder, job, self._groups, "PodGroup", name, namespace)


def delete_told(
    recorder: EventRecorder, job: Any, resource: Any, kind: str, name: str, namespace: str
) -> None:
    """Delete a gang object of ``job`` (gone already is fine) and tell it on the job: a Normal
    event once deleted, a Warning and an error when the API server refuses."""
    job_logger(job).info("Deleting %s %s", kind, name)
    try:
        resource.delete(name, namespace=namespace)
    except Exception as err:
        if is_not_found(err):
            return
        recorder.event(
            event_object(job),
            EVENT_TYPE_WARNING,
            FAILED_DELETE_POD_GROUP_REASON,
            f"Error deleting: {error_text(err)}",
        )
        raise RuntimeError(f"unable to delete {kind}: {error_text(err)}") from err
    recorder.event(
        event_object(job),
        EVENT_TYPE_NORMAL,
        SUCCESSFUL_DELETE_POD_GROUP_REASON,
        f"Deleted {kind}: {name}",
    )


def pod_group_phase(group: Any) -> str:
    """A PodGroup's ``status.phase`` ("" when it has none, or there is no group)."""
    status = group.get("status") if isinstance(group, dict) else None
    phase = status.get("phase") if isinstance(status, dict) else None
    return phase if isinstance(phase, str) else ""


def unschedulable_message(group: Any) -> str:
    """The message of a PodGroup's current Unschedulable condition ("" when there is none)."""
    status = group.get("status") if isinstance(group, dict) else None
    if not isinstance(status, dict) or status.get("phase") not in _UNPLACED_PHASES:
        return ""
    return condition_message(status, "Unschedulable", "True")
