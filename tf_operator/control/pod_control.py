"""Create, delete and patch pods for a controller, recording the v0.5.3 events.

``create_pods_with_controller_ref`` builds the pod from a template (labels, annotations,
finalizers, name and spec copied; exactly the given owner reference) and refuses templates
without labels. ``delete_pod`` reads the pod live first: a missing pod or one already
terminating is not deleted again. Both record ``SuccessfulCreatePod`` / ``FailedCreatePod`` /
``SuccessfulDeletePod`` / ``FailedDeletePod`` on the controller object.
"""

from __future__ import annotations

import copy
import logging
from typing import Any, Protocol

from tf_operator.control.util import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    error_text,
    event_object,
    validate_controller_ref,
)
from tf_operator.k8s.client import PODS, is_not_found

log = logging.getLogger(__name__)

FAILED_CREATE_POD_REASON = "FailedCreatePod"
SUCCESSFUL_CREATE_POD_REASON = "SuccessfulCreatePod"
FAILED_DELETE_POD_REASON = "FailedDeletePod"
SUCCESSFUL_DELETE_POD_REASON = "SuccessfulDeletePod"


class PodControlInterface(Protocol):
    def create_pods_with_controller_ref(
        self, namespace: str, template: dict, controller_object: Any, controller_ref: dict
    ) -> dict: ...

    def delete_pod(self, namespace: str, name: str, controller_object: Any) -> bool: ...

    def patch_pod(self, namespace: str, name: str, data: dict) -> None: ...


def get_pod_from_template(template: dict, controller_ref: dict | None) -> dict:
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
        metadata["ownerReferences"] = [copy.deepcopy(controller_ref)]
    for key in ("annotations", "finalizers"):
        if not metadata[key]:
            del metadata[key]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


class PodControl:
    """Pod writes through the API, with events on the controlling object."""

    def __init__(self, kube_client: Any, recorder: Any) -> None:
        self._pods = kube_client.resource(PODS)
        self.recorder = recorder

    def create_pods_with_controller_ref(
        self, namespace: str, template: dict, controller_object: Any, controller_ref: dict
    ) -> dict:
        validate_controller_ref(controller_ref)
        pod = get_pod_from_template(template, controller_ref)
        if not pod["metadata"]["labels"]:
            raise ValueError("unable to create pods, no labels")
        pod["metadata"]["namespace"] = namespace
        try:
            created = self._pods.create(pod, namespace=namespace)
        except Exception as err:
            self.recorder.event(
                event_object(controller_object),
                EVENT_TYPE_WARNING,
                FAILED_CREATE_POD_REASON,
                f"Error creating: {error_text(err)}",
            )
            raise
        name = created.get("metadata", {}).get("name", "")
        self.recorder.event(
            event_object(controller_object),
            EVENT_TYPE_NORMAL,
            SUCCESSFUL_CREATE_POD_REASON,
            f"Created pod: {name}",
        )
        return created

    def delete_pod(self, namespace: str, name: str, controller_object: Any) -> bool:
        """Delete the pod; False when nothing was deleted (gone or already terminating)."""
        try:
            pod = self._pods.get(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return False
            raise
        if pod.get("metadata", {}).get("deletionTimestamp"):
            log.info("pod %s/%s is terminating, skip deleting", namespace, name)
            return False
        try:
            self._pods.delete(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return False
            self.recorder.event(
                event_object(controller_object),
                EVENT_TYPE_WARNING,
                FAILED_DELETE_POD_REASON,
                f"Error deleting: {error_text(err)}",
            )
            raise RuntimeError(f"unable to delete pods: {error_text(err)}") from err
        self.recorder.event(
            event_object(controller_object),
            EVENT_TYPE_NORMAL,
            SUCCESSFUL_DELETE_POD_REASON,
            f"Deleted pod: {name}",
        )
        return True

    def patch_pod(self, namespace: str, name: str, data: dict) -> None:
        self._pods.patch(name, data, namespace=namespace, patch_type="strategic")
