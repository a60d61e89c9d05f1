"""Best-effort core/v1 Events from local-cluster components (scheduler, kubelet).

Events are only for humans (``kubectl describe``), so failures are logged and dropped.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from localcluster.apimachinery.objects import format_time
from localcluster.client.api import ClusterClient

logger = logging.getLogger(__name__)

EVENTS = ("", "v1", "events")


def now_rfc3339() -> str:
    return format_time(time.time())


def record_event(
    client: ClusterClient,
    obj: dict[str, Any],
    event_type: str,
    reason: str,
    message: str,
    component: str,
    host: str = "",
) -> None:
    """Create an Event about ``obj`` (a pod or node); never raises."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    stamp = now_rfc3339()
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta.get('name')}.{uuid.uuid4().hex[:16]}", "namespace": namespace},
        "involvedObject": {
            "apiVersion": obj.get("apiVersion", "v1"),
            "kind": obj.get("kind", "Pod"),
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        },
        "reason": reason,
        "message": message,
        "type": event_type,
        "source": {"component": component, **({"host": host} if host else {})},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "reportingComponent": component,
        "reportingInstance": host,
    }
    try:
        client.create(EVENTS, namespace, event, shared=True)
    except Exception as err:  # noqa: BLE001 - events are advisory
        logger.debug("dropping event %s for %s: %s", reason, meta.get("name"), err)
