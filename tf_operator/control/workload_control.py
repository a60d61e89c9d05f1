"""Kubernetes' own gang scheduling (``--gang-scheduler-name kubernetes``): a job's ``Workload``
and its runtime ``PodGroup`` in ``scheduling.k8s.io/v1beta1``, which kube-scheduler's
``GangScheduling`` plugin reads (feature gate ``GenericWorkload``; KEP-4671, KEP-6089).

Shapes, names and ownership follow the in-tree Job controller of Kubernetes v1.37
(``pkg/controller/job/job_scheduling_manager.go``, its first user):

- the ``Workload`` is named ``<job>-<hash of the job's UID>``, owned (controller reference) by
  the job, with ``spec.controllerRef`` naming it, and one ``podGroupTemplates`` entry
  ``<job>-pgt-0`` whose policy is ``gang`` with ``minCount`` = the job's
  ``schedulingPolicy.minAvailable``, else all its replicas (at least 1);
- the ``PodGroup`` is named ``<workload>-<template>-<hash of both>``, copies the template's
  policy and priority class, points back with ``spec.workloadRef``, and is owned by the job
  (controller reference) and the Workload (a plain reference), so deleting the job deletes both
  through the garbage collector;
- the Workload is created before the PodGroup and the PodGroup before any pod (the reconciler
  creates no pod while the group could not be read or created); every pod names the group in
  ``spec.schedulingGroup.podGroupName`` and keeps its ``schedulerName`` (none: the default
  scheduler gang-schedules);
- an object being deleted (kube-apiserver keeps a PodGroup, finalizer
  ``scheduling.k8s.io/podgroup-protection``, while active pods name it) is neither used nor
  deleted again: the pods wait until it is gone, then it is made again (the informer's delete
  event brings the job back);
- a changed ``minAvailable`` is patched into both objects' ``gang.minCount``, the one field of
  a policy the API lets change; the other fields are immutable and left as created;
- an unplaceable group is told by kube-scheduler as the PodGroup's
  ``PodGroupInitiallyScheduled=False`` condition (reason ``Unschedulable`` or
  ``SchedulerError``); its message is what the job's Warning event repeats (D40).

Differences from the Job controller (divergence D180): the UID hash is FNV-1a of the UID's text
(the Job controller hashes Go's dump of the value), so the names differ from a Job's but are
as stable; the template name is cut so it stays a DNS label (the Job controller does not cut
it); the groups are made whenever the job's pods are about to be made, not only for a job that
never started (a suspended job's groups are deleted and made again on resume); pods carry no
owner reference to their PodGroup (the job's is their controller, and the group is deleted on
suspend and made again under the same name); the group's priority class is the one every
replica template names (none when they differ: kube-scheduler refuses a group whose pods'
priorities differ from its own), not ``schedulingPolicy.priorityClass``.
"""

from __future__ import annotations

from typing import Any

from tf_operator.control.object_control import EventRecorder
from tf_operator.control.podgroup_control import (
    GangPolicy,
    GangSchedulerBackend,
    PodGroupControl,
    backend_for,
    condition_message,
    delete_told,
)
from tf_operator.control.util import (
    EVENT_TYPE_NORMAL,
    event_object,
    meta,
)
from tf_operator.k8s.client import KubeInterface, Resource, is_not_found
from tf_operator.k8s.objects import Obj

KUBERNETES = "kubernetes"
SCHEDULING_API_VERSION = "scheduling.k8s.io/v1beta1"
WORKLOADS = Resource("scheduling.k8s.io", "v1beta1", "workloads", "Workload")
POD_GROUPS = Resource("scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup")
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
WORKLOAD_CREATED_REASON = "WorkloadCreated"
POD_GROUP_CREATED_REASON = "PodGroupCreated"
DNS_SUBDOMAIN_MAX = 253
DNS_LABEL_MAX = 63
# rand.SafeEncodeString's alphabet (no vowels, no look-alikes)
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def _fnv32a(*parts: str) -> int:
    h = 0x811C9DC5
    for part in parts:
        for byte in part.encode():
            h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def _safe_hash(*parts: str) -> str:
    """apimachinery's ``rand.SafeEncodeString`` of the decimal FNV-1a hash of ``parts``."""
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(_fnv32a(*parts)))


def workload_name(job_name: str, job_uid: str) -> str:
    """``<job>-<hash of the UID>``, within a DNS subdomain's length."""
    digest = _safe_hash(job_uid)
    return f"{job_name[: DNS_SUBDOMAIN_MAX - len(digest) - 1]}-{digest}"


def template_name(job_name: str) -> str:
    """``<job>-pgt-0``: the job's one PodGroupTemplate, cut to a DNS label (D180)."""
    suffix = "-pgt-0"
    return f"{job_name[: DNS_LABEL_MAX - len(suffix)].rstrip('-.')}{suffix}"


def pod_group_name(workload: str, template: str) -> str:
    """``<workload>-<template>-<hash of both>``, each part cut to its share, as the Job
    controller's ``computePodGroupName``."""
    digest = _safe_hash(workload, template)
    room = DNS_SUBDOMAIN_MAX - len(digest) - 2
    if len(workload) + len(template) > room:
        half = room // 2
        if len(workload) <= half:
            template = template[: room - len(workload)]
        elif len(template) <= half:
            workload = workload[: room - len(template)]
        else:
            workload, template = workload[: room - half], template[:half]
    return f"{workload}-{template}-{digest}"


def job_pod_group_name(job_name: str, job_uid: str) -> str:
    """The name of the PodGroup a job's pods name in ``spec.schedulingGroup``."""
    return pod_group_name(workload_name(job_name, job_uid), template_name(job_name))


def initially_scheduled_message(group: Obj | None, pods: list[Obj]) -> str:
    """Why kube-scheduler cannot place the group: the message of its
    ``PodGroupInitiallyScheduled=False`` condition ("" once True, or before any cycle)."""
    if group is None:
        return ""
    status = group.get("status")
    message = condition_message(status, INITIALLY_SCHEDULED, "False")
    if message:
        return message
    # a False condition with no message still says why by its reason
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if (
            isinstance(condition, dict)
            and condition.get("type") == INITIALLY_SCHEDULED
            and condition.get("status") == "False"
        ):
            return str(condition.get("reason") or "")
    return ""


def initially_scheduled(group: Any) -> str:
    """The status of a PodGroup's ``PodGroupInitiallyScheduled`` condition ("" without one)."""
    status = group.get("status") if isinstance(group, dict) else None
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, dict) and condition.get("type") == INITIALLY_SCHEDULED:
            return str(condition.get("status") or "")
    return ""


def gang_spec(policy: GangPolicy, current: Obj | None) -> Obj:
    """The PodGroup's scheduling policy: a gang of ``minMember`` (at least one pod)."""
    return {"schedulingPolicy": {"gang": {"minCount": max(1, policy.min_member)}}}


KUBERNETES_BACKEND = GangSchedulerBackend(
    "",  # no schedulerName: the default scheduler does it
    POD_GROUPS,
    spec_for=gang_spec,
    admits=lambda group: group is not None,  # the group before any pod
    unschedulable=initially_scheduled_message,
    scheduling_group=job_pod_group_name,
)


def _min_count(obj: Any) -> int | None:
    policy = obj.get("schedulingPolicy") if isinstance(obj, dict) else None
    gang = policy.get("gang") if isinstance(policy, dict) else None
    count = gang.get("minCount") if isinstance(gang, dict) else None
    return count if isinstance(count, int) else None


class GroupTerminating(RuntimeError):
    """The job's Workload or PodGroup is being deleted: a new one is made once it is gone."""


def _not_going(obj: Obj | None) -> None:
    """Refuse to build on an object being deleted: kube-apiserver keeps a PodGroup (finalizer
    ``scheduling.k8s.io/podgroup-protection``) until no active pod names it, so right after a
    suspend the old group may still be there; pods made now would name a group about to go."""
    if obj is not None and meta(obj).get("deletionTimestamp"):
        m = meta(obj)
        raise GroupTerminating(
            f"{obj.get('kind', 'object')} {m.get('namespace')}/{m.get('name')} is being deleted; "
            "the pods wait for it to go and be made again"
        )


def _controlled_by(obj: Obj, uid: str) -> bool:
    return any(
        ref.get("controller") is True and ref.get("uid") == uid
        for ref in meta(obj).get("ownerReferences") or []
        if isinstance(ref, dict)
    )


def templates_priority_class(job: Any) -> str:
    """The priority class every replica template of ``job`` names ("" when they differ)."""
    specs = job.replica_specs() if hasattr(job, "replica_specs") else {}
    names = {
        str(((spec.template or {}).get("spec") or {}).get("priorityClassName") or "")
        for spec in specs.values()
    }
    return names.pop() if len(names) == 1 else ""


class WorkloadControl:
    """Create, resize and delete a job's Workload and PodGroup (see the module docstring);
    the same methods as :class:`PodGroupControl`, which the reconciler calls."""

    def __init__(self, kube_client: KubeInterface, recorder: EventRecorder) -> None:
        self.backend = KUBERNETES_BACKEND
        self._workloads = kube_client.resource(WORKLOADS)
        self._groups = kube_client.resource(POD_GROUPS)
        self.recorder = recorder

    def sync_pod_group(self, job: Any, policy: GangPolicy, owner_ref: Obj) -> Obj:
        """Make sure the job's Workload, then its PodGroup, exist with the policy's
        ``minCount``; returns the PodGroup. A same-named object the job does not control is
        an error, never adopted."""
        m = meta(job)
        name, namespace, uid = m.get("name", ""), m.get("namespace", ""), m.get("uid", "")
        count = max(1, policy.min_member)
        wl_name, tpl = workload_name(name, uid), template_name(name)
        priority_class = templates_priority_class(job)
        workload = self._get(self._workloads, wl_name, namespace)
        _not_going(workload)
        if workload is None:
            template: Obj = {"name": tpl, "schedulingPolicy": {"gang": {"minCount": count}}}
            if priority_class:
                template["priorityClassName"] = priority_class
            group, _, version = owner_ref.get("apiVersion", "").rpartition("/")
            workload = self._workloads.create(
                {
                    "apiVersion": SCHEDULING_API_VERSION,
                    "kind": "Workload",
                    "metadata": {
                        "name": wl_name,
                        "namespace": namespace,
                        "ownerReferences": [owner_ref],
                    },
                    "spec": {
                        "controllerRef": {
                            "apiGroup": group,
                            "kind": owner_ref.get("kind", ""),
                            "name": name,
                        },
                        "podGroupTemplates": [template],
                    },
                },
                namespace=namespace,
            )
            self._told(job, WORKLOAD_CREATED_REASON, f"Created Workload {wl_name}")
        else:
            self._check_owner(workload, uid, job)
            workload = self._resize_workload(workload, tpl, count, namespace)
        pg_name = pod_group_name(wl_name, tpl)
        pod_group = self._get(self._groups, pg_name, namespace)
        _not_going(pod_group)
        if pod_group is None:
            spec: Obj = {
                "workloadRef": {"workloadName": wl_name, "templateName": tpl},
                "schedulingPolicy": {"gang": {"minCount": count}},
            }
            if priority_class:
                spec["priorityClassName"] = priority_class
            workload_ref = {
                "apiVersion": SCHEDULING_API_VERSION,
                "kind": "Workload",
                "name": wl_name,
                "uid": meta(workload).get("uid", ""),
            }
            pod_group = self._groups.create(
                {
                    "apiVersion": SCHEDULING_API_VERSION,
                    "kind": "PodGroup",
                    "metadata": {
                        "name": pg_name,
                        "namespace": namespace,
                        "ownerReferences": [owner_ref, workload_ref],
                    },
                    "spec": spec,
                },
                namespace=namespace,
            )
            self._told(job, POD_GROUP_CREATED_REASON, f"Created PodGroup {pg_name}")
            return pod_group
        self._check_owner(pod_group, uid, job)
        current = _min_count(pod_group.get("spec"))
        if current is not None and current != count:
            patch = {"spec": {"schedulingPolicy": {"gang": {"minCount": count}}}}
            return self._groups.patch(pg_name, patch, namespace=namespace)
        return pod_group

    def delete_pod_group(self, job: Any) -> None:
        """Delete the job's PodGroup, then its Workload (each only if it exists)."""
        m = meta(job)
        name, namespace, uid = m.get("name", ""), m.get("namespace", ""), m.get("uid", "")
        wl_name = workload_name(name, uid)
        pg_name = pod_group_name(wl_name, template_name(name))
        self._delete(job, self._groups, "PodGroup", pg_name, namespace)
        self._delete(job, self._workloads, "Workload", wl_name, namespace)

    # -- helpers ------------------------------------------------------------------------

    @staticmethod
    def _get(resource: Any, name: str, namespace: str) -> Obj | None:
        try:
            obj: Obj = resource.get(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return None
            raise
        return obj

    @staticmethod
    def _check_owner(obj: Obj, uid: str, job: Any) -> None:
        if not _controlled_by(obj, uid):
            m = meta(obj)
            raise RuntimeError(
                f"{obj.get('kind', 'object')} {m.get('namespace')}/{m.get('name')} exists and "
                f"is not controlled by {meta(job).get('name')}"
            )

    def _resize_workload(self, workload: Obj, tpl: str, count: int, namespace: str) -> Obj:
        templates = (workload.get("spec") or {}).get("podGroupTemplates") or []
        if not any(isinstance(t, dict) and t.get("name") == tpl for t in templates):
            return workload
        changed = False
        new_templates = []
        for t in templates:
            if isinstance(t, dict) and t.get("name") == tpl:
                now = _min_count(t)
                if now is not None and now != count:
                    t = {**t, "schedulingPolicy": {"gang": {"minCount": count}}}
                    changed = True
            new_templates.append(t)
        if not changed:
            return workload
        patch = {"spec": {"podGroupTemplates": new_templates}}
        result: Obj = self._workloads.patch(
            meta(workload).get("name", ""), patch, namespace=namespace
        )
        return result

    def _delete(self, job: Any, resource: Any, kind: str, name: str, namespace: str) -> None:
        current = self._get(resource, name, namespace)
        if current is None or meta(current).get("deletionTimestamp"):
            return  # gone, or going (a PodGroup is kept while pods name it)
        delete_told(self.recorder, job, resource, kind, name, namespace)

    def _told(self, job: Any, reason: str, message: str) -> None:
        self.recorder.event(event_object(job), EVENT_TYPE_NORMAL, reason, message)


def group_control_for(
    kube_client: KubeInterface, recorder: EventRecorder, scheduler_name: str
) -> PodGroupControl | WorkloadControl:
    """The control of the backend ``--gang-scheduler-name`` names."""
    if scheduler_name == KUBERNETES:
        return WorkloadControl(kube_client, recorder)
    return PodGroupControl(kube_client, recorder, backend_for(scheduler_name))
