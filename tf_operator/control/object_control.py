"""Create and delete one kind of object through the API, recording events on the controller.

:class:`PodControl` and :class:`ServiceControl` differ only in how they build the body they
create, the event reasons and the nouns in their messages. :class:`RecordedObjectControl`
holds the shared write paths once: ``_create_recorded`` posts a body and records the failed or
successful create event; ``_delete_recorded`` reads the object live first (a missing object
or one already terminating is not deleted again), deletes it and records the failed or
successful delete event. Subclasses set the reasons and nouns as class attributes.
"""

from __future__ import annotations

import logging
from typing import Any

from tf_operator.control.util import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    error_text,
    event_object,
)
from tf_operator.k8s.client import is_not_found

log = logging.getLogger(__name__)


class RecordedObjectControl:
    """Writes of one resource kind with events on the controlling object."""

    noun: str  # in event messages and logs: "pod", "service"
    delete_failure_noun: str  # in the error raised on a failed delete
    failed_create_reason: str
    successful_create_reason: str
    failed_delete_reason: str
    successful_delete_reason: str
    logger: logging.Logger = log  # subclasses log under their own module's name

    def __init__(self, kube_client: Any, recorder: Any, resource: Any) -> None:
        self._resource = kube_client.resource(resource)
        self.recorder = recorder

    def _record(self, controller_object: Any, event_type: str, reason: str, message: str) -> None:
        self.recorder.event(event_object(controller_object), event_type, reason, message)

    def _on_created(self, name: str) -> None:
        """Hook run after a successful create, before its event is recorded."""

    def _create_recorded(self, namespace: str, body: dict, controller_object: Any) -> dict:
        try:
            created = self._resource.create(body, namespace=namespace)
        except Exception as err:
            self._record(
                controller_object,
                EVENT_TYPE_WARNING,
                self.failed_create_reason,
                f"Error creating: {error_text(err)}",
            )
            raise
        name = created.get("metadata", {}).get("name", "")
        self._on_created(name)
        self._record(
            controller_object,
            EVENT_TYPE_NORMAL,
            self.successful_create_reason,
            f"Created {self.noun}: {name}",
        )
        return created

    def _delete_recorded(self, namespace: str, name: str, controller_object: Any) -> bool:
        """Delete the object; False when nothing was deleted (gone or already terminating)."""
        try:
            current = self._resource.get(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return False
            raise
        if current.get("metadata", {}).get("deletionTimestamp"):
            self.logger.info("%s %s/%s is terminating, skip deleting", self.noun, namespace, name)
            return False
        try:
            self._resource.delete(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return False
            self._record(
                controller_object,
                EVENT_TYPE_WARNING,
                self.failed_delete_reason,
                f"Error deleting: {error_text(err)}",
            )
            raise RuntimeError(
                f"unable to delete {self.delete_failure_noun}: {error_text(err)}"
            ) from err
        self._record(
            controller_object,
            EVENT_TYPE_NORMAL,
            self.successful_delete_reason,
            f"Deleted {self.noun}: {name}",
        )
        return True

    def _patch_strategic(self, namespace: str, name: str, data: dict) -> None:
        self._resource.patch(name, data, namespace=namespace, patch_type="strategic")
