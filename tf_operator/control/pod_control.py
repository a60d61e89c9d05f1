"""Create, delete and patch pods for a controller, recording the v0.5.3 events.

``create_pods_with_controller_ref`` builds the pod from a template (labels, annotations,
finalizers, name and spec copied; exactly the given owner reference) and refuses templates
without labels. ``delete_pod`` reads the pod live first: a missing pod or one already
terminating is not deleted again. Both record ``SuccessfulCreatePod`` / ``FailedCreatePod`` /
``SuccessfulDeletePod`` / ``FailedDeletePod`` on the controller object. The create, delete
and event mechanics shared with services are in :mod:`.object_control`.
"""

from __future__ import annotations

from typing import Any, Protocol

from tf_operator.control.object_control import EventRecorder, RecordedObjectControl
from tf_operator.control.util import validate_controller_ref
from tf_operator.k8s.client import PODS, KubeInterface
from tf_operator.k8s.objects import Obj, json_copy

FAILED_CREATE_POD_REASON = "FailedCreatePod"
SUCCESSFUL_CREATE_POD_REASON = "SuccessfulCreatePod"
FAILED_DELETE_POD_REASON = "FailedDeletePod"
SUCCESSFUL_DELETE_POD_REASON = "SuccessfulDeletePod"


class PodControlInterface(Protocol):
    def create_pods_with_controller_ref(
        self, namespace: str, template: Obj, controller_object: Any, controller_ref: Obj
    ) -> Obj: ...

    def delete_pod(
        self, namespace: str, name: str, controller_object: Any, seen: Obj | None = None
    ) -> bool: ...

    def patch_pod(self, namespace: str, name: str, data: Obj) -> None: ...


def get_pod_from_template(template: Obj, controller_ref: Obj | None) -> Obj:
    """A pod built from a PodTemplateSpec dict, owned by ``controller_ref`` only."""
    tmeta = template.get("metadata") or {}
    metadata: dict[str, Any] = {
        "labels": dict(tmeta.get("labels") or {}),
        "annotations": dict(tmeta.get("annotations") or {}),
        "finalizers": list(tmeta.get("finalizers") or []),
    }
    if tmeta.get("name"):
        metadata["name"] = tmeta["name"]
    if controller_ref is not None:
        metadata["ownerReferences"] = [json_copy(controller_ref)]
    for key in ("annotations", "finalizers"):
        if not metadata[key]:
            del metadata[key]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": json_copy(template.get("spec") or {}),
    }


class PodControl(RecordedObjectControl):
    """Pod writes through the API, with events on the controlling object."""

    noun = "pod"
    delete_failure_noun = "pods"
    failed_create_reason = FAILED_CREATE_POD_REASON
    successful_create_reason = SUCCESSFUL_CREATE_POD_REASON
    failed_delete_reason = FAILED_DELETE_POD_REASON
    successful_delete_reason = SUCCESSFUL_DELETE_POD_REASON

    def __init__(self, kube_client: KubeInterface, recorder: EventRecorder) -> None:
        super().__init__(kube_client, recorder, PODS)

    def create_pods_with_controller_ref(
        self, namespace: str, template: Obj, controller_object: Any, controller_ref: Obj
    ) -> Obj:
        validate_controller_ref(controller_ref)
        pod = get_pod_from_template(template, controller_ref)
        if not pod["metadata"]["labels"]:
            raise ValueError("unable to create pods, no labels")
        pod["metadata"]["namespace"] = namespace
        return self._create_recorded(namespace, pod, controller_object)

    def delete_pod(
        self, namespace: str, name: str, controller_object: Any, seen: Obj | None = None
    ) -> bool:
        """Delete the pod; False when nothing was deleted (see ``delete``)."""
        return self.delete(namespace, name, controller_object, seen)

    def patch_pod(self, namespace: str, name: str, data: Obj) -> None:
        self.patch(namespace, name, data)
