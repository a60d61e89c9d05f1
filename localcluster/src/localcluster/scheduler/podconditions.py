"""Pod conditions a scheduler writes (``PodScheduled``, Volcano's ``Ready=False/Evict``), and
the binding with its ``Scheduled`` event.

Written as a strategic-merge patch of ``status.conditions`` (merge key ``type``), so a
scheduler never overwrites what the kubelet wrote from a stale copy. ``ConditionReporter``
remembers what it reported per pod, so a pod whose status cannot be written (an object that
got past validation and is now refused on every write) still gets its event, once.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, cast

from localcluster.client.api import ClusterClient
from localcluster.client.events import now_rfc3339, record_event
from localcluster.client.informer import PODS, object_key

logger = logging.getLogger(__name__)


def bind(
    client: ClusterClient, key: str, pod: dict[str, Any], node_name: str, component: str
) -> Exception | None:
    """Bind the pod (``namespace/name``) to the node and record kube-scheduler's ``Scheduled``
    event; the error when the binding was refused (deleted or bound meanwhile)."""
    namespace, _, name = key.partition("/")
    try:
        client.bind(namespace, name, node_name, shared=True)
    except Exception as err:  # noqa: BLE001 - the caller undoes its assumption
        return err
    message = f"Successfully assigned {key} to {node_name}"
    record_event(client, pod, "Normal", "Scheduled", message, component)
    return None


def has_condition(pod: dict[str, Any], ctype: str, status: str, reason: str, message: str) -> bool:
    for current in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(current, dict) and current.get("type") == ctype:
            return (current.get("status"), current.get("reason"), current.get("message")) == (
                status,
                reason,
                message,
            )
    return False


def patch_condition(
    client: ClusterClient, pod: dict[str, Any], condition: dict[str, Any]
) -> dict[str, Any]:
    """Set one condition (by type) through ``pods/status``; returns the patched pod."""
    meta = pod.get("metadata") or {}
    stamped = {**condition, "lastProbeTime": None, "lastTransitionTime": now_rfc3339()}
    return client.patch(
        PODS,
        meta.get("namespace"),
        cast(str, meta.get("name")),
        {"status": {"conditions": [stamped]}},
        "strategic",
        subresource="status",
    )


class ConditionReporter:
    """``PodScheduled=False`` plus a Warning event, once per (reason, message) of a pod."""

    def __init__(self, client: ClusterClient, component: str) -> None:
        self._client = client
        self._component = component
        self._lock = threading.Lock()
        self._reported: dict[str, tuple[str, str]] = {}

    def forget(self, key: str) -> None:
        """The pod is gone or bound: a later report about the same name is new."""
        with self._lock:
            self._reported.pop(key, None)

    def report(
        self, pod: dict[str, Any], reason: str, message: str, event_reason: str
    ) -> dict[str, Any] | None:
        """Write the condition and record the event unless already done; returns the patched
        pod when the write went through."""
        key = object_key(pod)
        with self._lock:
            if self._reported.get(key) == (reason, message):
                return None
            self._reported[key] = (reason, message)
        if has_condition(pod, "PodScheduled", "False", reason, message):
            return None
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
        }
        patched = None
        try:
            patched = patch_condition(self._client, pod, condition)
        except Exception as err:  # noqa: BLE001 - the event below still tells the user
            if getattr(err, "code", None) == 404:
                return None
            logger.info("could not set PodScheduled on %s: %s", key, err)
        record_event(self._client, pod, "Warning", event_reason, message, self._component)
        return patched
