"""Create, delete and patch services for a controller, recording the v0.5.3 events."""

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
from tf_operator.k8s.client import SERVICES, is_not_found

log = logging.getLogger(__name__)

FAILED_CREATE_SERVICE_REASON = "FailedCreateService"
SUCCESSFUL_CREATE_SERVICE_REASON = "SuccessfulCreateService"
FAILED_DELETE_SERVICE_REASON = "FailedDeleteService"
SUCCESSFUL_DELETE_SERVICE_REASON = "SuccessfulDeleteService"


class ServiceControlInterface(Protocol):
    def create_services_with_controller_ref(
        self, namespace: str, service: dict, controller_object: Any, controller_ref: dict
    ) -> dict: ...

    def delete_service(self, namespace: str, name: str, controller_object: Any) -> bool: ...

    def patch_service(self, namespace: str, name: str, data: dict) -> None: ...


class ServiceControl:
    """Service writes through the API, with events on the controlling object."""

    def __init__(self, kube_client: Any, recorder: Any) -> None:
        self._services = kube_client.resource(SERVICES)
        self.recorder = recorder

    def create_services_with_controller_ref(
        self, namespace: str, service: dict, controller_object: Any, controller_ref: dict
    ) -> dict:
        validate_controller_ref(controller_ref)
        body = copy.deepcopy(service)
        metadata = body.setdefault("metadata", {})
        if not metadata.get("labels"):
            raise ValueError("unable to create Services, no labels")
        body.setdefault("apiVersion", "v1")
        body.setdefault("kind", "Service")
        metadata["namespace"] = namespace
        metadata["ownerReferences"] = [*metadata.get("ownerReferences", []), controller_ref]
        try:
            created = self._services.create(body, namespace=namespace)
        except Exception as err:
            self.recorder.event(
                event_object(controller_object),
                EVENT_TYPE_WARNING,
                FAILED_CREATE_SERVICE_REASON,
                f"Error creating: {error_text(err)}",
            )
            raise
        name = created.get("metadata", {}).get("name", "")
        log.info("Controller created service %s", name)
        self.recorder.event(
            event_object(controller_object),
            EVENT_TYPE_NORMAL,
            SUCCESSFUL_CREATE_SERVICE_REASON,
            f"Created service: {name}",
        )
        return created

    def delete_service(self, namespace: str, name: str, controller_object: Any) -> bool:
        """Delete the service; False when nothing was deleted (gone or already terminating)."""
        try:
            service = self._services.get(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return False
            raise
        if service.get("metadata", {}).get("deletionTimestamp"):
            log.info("service %s/%s is terminating, skip deleting", namespace, name)
            return False
        try:
            self._services.delete(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return False
            self.recorder.event(
                event_object(controller_object),
                EVENT_TYPE_WARNING,
                FAILED_DELETE_SERVICE_REASON,
                f"Error deleting: {error_text(err)}",
            )
            raise RuntimeError(f"unable to delete service: {error_text(err)}") from err
        self.recorder.event(
            event_object(controller_object),
            EVENT_TYPE_NORMAL,
            SUCCESSFUL_DELETE_SERVICE_REASON,
            f"Deleted service: {name}",
        )
        return True

    def patch_service(self, namespace: str, name: str, data: dict) -> None:
        self._services.patch(name, data, namespace=namespace, patch_type="strategic")
