"""PodGroups for gang scheduling: what a job asks of its group, and the backends that write it.

:class:`GangPolicy` is what a job asks of its PodGroup, computed once per pass whatever the
backend (minMember, queue, priority class, minResources, schedule timeout: training-operator
v1.9's ``schedulingPolicy``). A :class:`GangSchedulerBackend` says which API its groups live in,
which spec fields it writes from the policy (``spec_for``), whether it needs ``minResources``
computed, and whether pods must wait for the scheduler to admit the group (``admits``). A
third backend is one more ``GangSchedulerBackend``. Pods join a group through the
``scheduling.k8s.io/group-name`` annotation; ``volcano.sh/task-spec`` names their task.

v0.5.3 only knew kube-batch (``scheduling.incubator.k8s.io/v1alpha1``) and wrote only
``minMember``; its PodGroups keep exactly that unless the job's ``schedulingPolicy`` asks for a
queue or a priority class. Volcano (``scheduling.volcano.sh/v1beta1``) gets v1.9's spec: queue
``default`` unless named, the priority class, and ``minResources``, computed when unset. A
group's existing queue is never changed (v1.9; the job's queue is immutable).

Fixes over v0.5.3 (divergence D24): only a 404 leads to a create (v0.5.3 created on any GET
error), and an existing group whose fields differ from the policy is patched (v0.5.3 never
updated it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tf_operator.control.object_control import EventRecorder
from tf_operator.control.util import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    error_text,
    event_object,
    meta,
)
from tf_operator.k8s.client import KubeInterface, Resource, is_not_found
from tf_operator.k8s.objects import Obj
from tf_operator.k8s.quantity import Quantity, QuantityError

log = logging.getLogger(__name__)

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
SUCCESSFUL_DELETE_POD_GROUP_REASON = "SuccessfulDeletePodGroup"
FAILED_DELETE_POD_GROUP_REASON = "FailedDeletePodGroup"
DEFAULT_QUEUE = "default"
# Phases in which a PodGroup's Unschedulable condition is current: kube-batch and Volcano
# never remove a stale one.
_UNPLACED_PHASES = ("Pending", "Inqueue", "Unknown")


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
    """Volcano v1beta1, as training-operator v1.9 fills it."""
    return {
        "minMember": policy.min_member,
        "queue": _existing_queue(current) or policy.queue or DEFAULT_QUEUE,
        "priorityClassName": policy.priority_class_name or None,
        "minResources": policy.min_resources,
    }


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

    @property
    def api_version(self) -> str:
        return f"{self.pod_groups.group}/{self.pod_groups.version}"


KUBE_BATCH = GangSchedulerBackend(
    "kube-batch", Resource("scheduling.incubator.k8s.io", "v1alpha1", "podgroups", "PodGroup")
)
VOLCANO = GangSchedulerBackend(
    "volcano",
    Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup"),
    spec_for=volcano_spec,
    computes_min_resources=True,
    admits=volcano_admits,
)


def backend_for(scheduler_name: str) -> GangSchedulerBackend:
    """``volcano`` selects the Volcano API; anything else is kube-batch's API under that name."""
    if scheduler_name == VOLCANO.scheduler_name:
        return VOLCANO
    if scheduler_name in ("", KUBE_BATCH.scheduler_name):
        return KUBE_BATCH
    return GangSchedulerBackend(scheduler_name, KUBE_BATCH.pod_groups)


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
        log.info("Deleting PodGroup %s", name)
        try:
            self._groups.delete(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return
            self.recorder.event(
                event_object(job),
                EVENT_TYPE_WARNING,
                FAILED_DELETE_POD_GROUP_REASON,
                f"Error deleting: {error_text(err)}",
            )
            raise RuntimeError(f"unable to delete PodGroup: {error_text(err)}") from err
        self.recorder.event(
            event_object(job),
            EVENT_TYPE_NORMAL,
            SUCCESSFUL_DELETE_POD_GROUP_REASON,
            f"Deleted PodGroup: {name}",
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
    for condition in status.get("conditions") or []:
        if (
            isinstance(condition, dict)
            and condition.get("type") == "Unschedulable"
            and condition.get("status") == "True"
        ):
            return str(condition.get("message") or "")
    return ""
