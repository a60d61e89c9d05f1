"""Create and delete one kind of object through the API, recording events on the controller.

:class:`PodControl` and :class:`ServiceControl` differ only in how they build the body they
create, the event reasons and the nouns in their messages. :class:`RecordedObjectControl`
holds the shared write paths once: ``_create_recorded`` posts a body and records the failed or
successful create event; ``delete`` deletes an object unless it is gone or already
terminating, and records the failed or successful delete event: given the object as the caller
saw it (its cache), it deletes exactly that object (a UID precondition, D52), else it reads the
object live first as v0.5.3 did; ``patch`` is a strategic-merge patch (what the ref managers
adopt and release with). Subclasses set the reasons and nouns as class attributes.
"""

from __future__ import annotations

from typing import Any, Protocol

from tf_operator.control.util import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    error_text,
    event_object,
    job_logger,
)
from tf_operator.k8s.client import KubeInterface, Resource, is_conflict, is_not_found
from tf_operator.k8s.objects import Obj, meta


class EventRecorder(Protocol):
    """What the control layer needs of an event recorder."""

    def event(self, obj: Obj, event_type: str, reason: str, message: str) -> None: ...


class ObjectControl(Protocol):
    """Delete and patch one kind of object on behalf of a controller (pods or services)."""

    def delete(
        self, namespace: str, name: str, controller_object: Any, seen: Obj | None = None
    ) -> bool: ...

    def patch(self, namespace: str, name: str, data: Obj) -> None: ...


class RecordedObjectControl:
    """Writes of one resource kind with events on the controlling object."""

    noun: str  # in event messages and logs: "pod", "service"
    delete_failure_noun: str  # in the error raised on a failed delete
    failed_create_reason: str
    successful_create_reason: str
    failed_delete_reason: str
    successful_delete_reason: str

    def __init__(self, kube_client: KubeInterface, recorder: EventRecorder, resource: Resource):
        self._resource = kube_client.resource(resource)
        self.recorder = recorder

    def _record(self, controller_object: Any, event_type: str, reason: str, message: str) -> None:
        self.recorder.event(event_object(controller_object), event_type, reason, message)

    def _on_created(self, name: str, controller_object: Any) -> None:
        """Hook run after a successful create, before its event is recorded."""

    def _create_recorded(self, namespace: str, body: Obj, controller_object: Any) -> Obj:
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
        name = str(created.get("metadata", {}).get("name", ""))
        self._on_created(name, controller_object)
        self._record(
            controller_object,
            EVENT_TYPE_NORMAL,
            self.successful_create_reason,
            f"Created {self.noun}: {name}",
        )
        return created

    def delete(
        self, namespace: str, name: str, controller_object: Any, seen: Obj | None = None
    ) -> bool:
        """Delete the object (only the one ``seen`` when given); False when nothing was
        deleted (gone, replaced by another of its name, or already terminating)."""
        if seen is None:
            current, uid = self._read(namespace, name), None
        else:  # what the caller saw is what gets deleted (D52)
            current, uid = seen, meta(seen).get("uid") or None
        if current is None:
            return False
        if meta(current).get("deletionTimestamp"):
            job_logger(controller_object).info(
                "%s %s/%s is terminating, skip deleting", self.noun, namespace, name
            )
            return False
        try:
            self._resource.delete(name, namespace=namespace, preconditions_uid=uid)
        except Exception as err:
            if is_not_found(err) or (uid is not None and is_conflict(err)):
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

    def _read(self, namespace: str, name: str) -> Obj | None:
        """The object read live; None when it is gone."""
        try:
            return self._resource.get(name, namespace=namespace)
        except Exception as err:
            if is_not_found(err):
                return None
            raise

    def patch(self, namespace: str, name: str, data: Obj) -> None:
        """Strategic-merge patch (adoption and release of the object)."""
        self._resource.patch(name, data, namespace=namespace, patch_type="strategic")
