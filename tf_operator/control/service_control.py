"""Create, delete and patch services for a controller, recording the v0.5.3 events.

The create, delete and event mechanics shared with pods are in :mod:`.object_control`; here
are the service body (a copy of the given service, namespaced and with the controller
reference appended) and the service event reasons.
"""

from __future__ import annotations

from typing import Any, Protocol

from tf_operator.control.object_control import EventRecorder, RecordedObjectControl
from tf_operator.control.util import job_logger, validate_controller_ref
from tf_operator.k8s.client import SERVICES, KubeInterface
from tf_operator.k8s.objects import Obj, json_copy
from tf_operator.logger import debug_enabled

FAILED_CREATE_SERVICE_REASON = "FailedCreateService"
SUCCESSFUL_CREATE_SERVICE_REASON = "SuccessfulCreateService"
FAILED_DELETE_SERVICE_REASON = "FailedDeleteService"
SUCCESSFUL_DELETE_SERVICE_REASON = "SuccessfulDeleteService"


class ServiceControlInterface(Protocol):
    def create_services_with_controller_ref(
        self, namespace: str, service: Obj, controller_object: Any, controller_ref: Obj
    ) -> Obj: ...

    def delete_service(
        self, namespace: str, name: str, controller_object: Any, seen: Obj | None = None
    ) -> bool: ...

    def patch_service(self, namespace: str, name: str, data: Obj) -> None: ...


class ServiceControl(RecordedObjectControl):
    """Service writes through the API, with events on the controlling object."""

    noun = "service"
    delete_failure_noun = "service"
    failed_create_reason = FAILED_CREATE_SERVICE_REASON
    successful_create_reason = SUCCESSFUL_CREATE_SERVICE_REASON
    failed_delete_reason = FAILED_DELETE_SERVICE_REASON
    successful_delete_reason = SUCCESSFUL_DELETE_SERVICE_REASON

    def __init__(self, kube_client: KubeInterface, recorder: EventRecorder) -> None:
        super().__init__(kube_client, recorder, SERVICES)

    def create_services_with_controller_ref(
        self, namespace: str, service: Obj, controller_object: Any, controller_ref: Obj
    ) -> Obj:
        validate_controller_ref(controller_ref)
        body = json_copy(service)
        metadata = body.setdefault("metadata", {})
        if not metadata.get("labels"):
            raise ValueError("unable to create Services, no labels")
        body.setdefault("apiVersion", "v1")
        body.setdefault("kind", "Service")
        metadata["namespace"] = namespace
        metadata["ownerReferences"] = [*metadata.get("ownerReferences", []), controller_ref]
        return self._create_recorded(namespace, body, controller_object)

    def _on_created(self, name: str, controller_object: Any) -> None:
        if debug_enabled():  # no logger built for a line not written
            job_logger(controller_object).debug("Controller created service %s", name)  # D53

    def delete_service(
        self, namespace: str, name: str, controller_object: Any, seen: Obj | None = None
    ) -> bool:
        """Delete the service; False when nothing was deleted (see ``delete``)."""
        return self.delete(namespace, name, controller_object, seen)

    def patch_service(self, namespace: str, name: str, data: Obj) -> None:
        self.patch(namespace, name, data)
