"""PodGroups for gang scheduling, with kube-batch and Volcano as interchangeable backends.

A job's PodGroup has the job's name and namespace, ``spec.minMember`` = the job's total
replicas and the job as controlling owner. v0.5.3 only knew kube-batch
(``scheduling.incubator.k8s.io/v1alpha1``); Volcano (``scheduling.volcano.sh/v1beta1``) uses
the same shape. Pods join the group through the ``scheduling.k8s.io/group-name`` annotation;
``volcano.sh/task-spec`` names their task (replica type).

Fixes over v0.5.3 (divergence D24): only a 404 leads to a create (v0.5.3 created on any GET
error), and an existing group whose ``minMember`` differs is patched (v0.5.3 never updated it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
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

log = logging.getLogger(__name__)

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
SUCCESSFUL_DELETE_POD_GROUP_REASON = "SuccessfulDeletePodGroup"
FAILED_DELETE_POD_GROUP_REASON = "FailedDeletePodGroup"
# Phases in which a PodGroup's Unschedulable condition is current: kube-batch and Volcano
# never remove a stale one.
_UNPLACED_PHASES = ("Pending", "Inqueue", "Unknown")


@dataclass(frozen=True)
class GangSchedulerBackend:
    """Which scheduler name pods get and which PodGroup API the job's group lives in."""

    scheduler_name: str
    pod_groups: Resource

    @property
    def api_version(self) -> str:
        return f"{self.pod_groups.group}/{self.pod_groups.version}"


KUBE_BATCH = GangSchedulerBackend(
    "kube-batch", Resource("scheduling.incubator.k8s.io", "v1alpha1", "podgroups", "PodGroup")
)
VOLCANO = GangSchedulerBackend(
    "volcano", Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup")
)


def backend_for(scheduler_name: str) -> GangSchedulerBackend:
    """``volcano`` selects the Volcano API; anything else is kube-batch's API under that name."""
    if scheduler_name == VOLCANO.scheduler_name:
        return VOLCANO
    if scheduler_name in ("", KUBE_BATCH.scheduler_name):
        return KUBE_BATCH
    return GangSchedulerBackend(scheduler_name, KUBE_BATCH.pod_groups)


class PodGroupControl:
    """Create/update and delete the PodGroup of a job."""

    def __init__(
        self, kube_client: KubeInterface, recorder: EventRecorder, backend: GangSchedulerBackend
    ) -> None:
        self.backend = backend
        self._groups = kube_client.resource(backend.pod_groups)
        self.recorder = recorder

    def sync_pod_group(self, job: Any, min_member: int, owner_ref: Obj) -> Obj:
        """Make sure the job's PodGroup exists with ``minMember`` = ``min_member``."""
        m = meta(job)
        name, namespace = m.get("name", ""), m.get("namespace", "")
        try:
            group = self._groups.get(name, namespace=namespace)
        except Exception as err:
            if not is_not_found(err):
                raise
            body = {
                "apiVersion": self.backend.api_version,
                "kind": "PodGroup",
                "metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner_ref]},
                "spec": {"minMember": min_member},
            }
            return self._groups.create(body, namespace=namespace)
        if (group.get("spec") or {}).get("minMember") != min_member:
            return self._groups.patch(
                name, {"spec": {"minMember": min_member}}, namespace=namespace
            )
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
