"""A job's PodGroup as users see it, whichever gang scheduler the operator runs with.

The operator makes one group per job when it gang-schedules: for kube-batch, Volcano and
scheduler-plugins a ``PodGroup`` named after the job in that scheduler's API group; for
Kubernetes' own gang scheduling (``--gang-scheduler-name kubernetes``) a
``scheduling.k8s.io/v1beta1`` ``PodGroup`` with a generated name, made from the job's
``Workload``. :func:`find_pod_group` finds the one the job controls (its controller owner
reference names the job's UID) and :func:`pod_group_info` says what it asks and where it
stands:

- Kubernetes: ``Scheduled`` once kube-scheduler's ``PodGroupInitiallyScheduled`` condition is
  True, ``Unschedulable`` (or ``SchedulerError``) with its message while False, ``Pending``
  before the scheduler has looked at it;
- kube-batch and Volcano: the group's phase, with its ``Unschedulable`` condition's message;
- scheduler-plugins: the group's phase.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tf_operator.k8s.client import Resource

KUBERNETES_POD_GROUPS = Resource("scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup")
# the out-of-tree schedulers' groups, named after their job
NAMED_POD_GROUPS = (
    Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup"),
    Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup"),
    Resource("scheduling.incubator.k8s.io", "v1alpha1", "podgroups", "PodGroup"),
)
# every API a job's PodGroup may live in (the four gang backends)
POD_GROUP_RESOURCES = (KUBERNETES_POD_GROUPS, *NAMED_POD_GROUPS)
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"


@dataclass(frozen=True)
class PodGroupInfo:
    """One line about a job's PodGroup."""

    name: str
    api_version: str
    min_member: int | None  # minCount / minMember; None when the group says none
    state: str  # Scheduled, Unschedulable, Pending, or the group's phase
    message: str = ""  # why it cannot be placed, when it says

    def __str__(self) -> str:
        size = "" if self.min_member is None else f", min {self.min_member}"
        why = f": {self.message}" if self.message else ""
        return f"{self.name} ({self.api_version}{size}) {self.state}{why}"


def _condition(status: Any, ctype: str) -> Mapping[str, Any] | None:
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == ctype:
            return condition
    return None


def pod_group_info(group: Mapping[str, Any]) -> PodGroupInfo:
    """What ``group`` (of any of the four APIs) asks and where it stands."""
    meta = group.get("metadata") or {}
    spec = group.get("spec") or {}
    status = group.get("status") or {}
    api_version = str(group.get("apiVersion") or "")
    if api_version == KUBERNETES_POD_GROUPS.api_version:
        gang = (spec.get("schedulingPolicy") or {}).get("gang")
        count = gang.get("minCount") if isinstance(gang, Mapping) else None
        scheduled = _condition(status, INITIALLY_SCHEDULED)
        if scheduled is None:
            state, message = "Pending", ""
        elif scheduled.get("status") == "True":
            state, message = "Scheduled", ""
        else:
            state = str(scheduled.get("reason") or "Unschedulable")
            message = str(scheduled.get("message") or "")
        return PodGroupInfo(str(meta.get("name") or ""), api_version, count, state, message)
    count = spec.get("minMember")
    phase = str(status.get("phase") or "Pending")
    unschedulable = _condition(status, "Unschedulable")
    message = ""
    if unschedulable is not None and unschedulable.get("status") == "True":
        message = str(unschedulable.get("message") or "")
    return PodGroupInfo(
        str(meta.get("name") or ""),
        api_version,
        count if isinstance(count, int) else None,
        phase,
        message,
    )


def controlled_by(obj: Mapping[str, Any], uid: str) -> bool:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(r.get("controller") is True and r.get("uid") == uid for r in refs)


def find_pod_group(
    job: Mapping[str, Any],
    list_groups: Callable[[Resource, str], list[dict[str, Any]]],
    get_group: Callable[[Resource, str, str], dict[str, Any] | None],
) -> dict[str, Any] | None:
    """The PodGroup the job controls, or None. ``list_groups(resource, namespace)`` and
    ``get_group(resource, namespace, name)`` read the API; a group API the cluster does not
    serve (or the caller may not read) is for them to answer with nothing."""
    meta = job.get("metadata") or {}
    uid, namespace, name = str(meta.get("uid") or ""), meta.get("namespace") or "", meta.get("name")
    for group in list_groups(KUBERNETES_POD_GROUPS, namespace):
        if controlled_by(group, uid):  # a list's items carry no apiVersion from kube-apiserver
            return {"apiVersion": KUBERNETES_POD_GROUPS.api_version, "kind": "PodGroup", **group}
    for resource in NAMED_POD_GROUPS:
        named = get_group(resource, namespace, str(name))
        if named is not None and controlled_by(named, uid):
            return {"apiVersion": resource.api_version, "kind": "PodGroup", **named}
    return None
