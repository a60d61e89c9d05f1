"""What the job controller keeps of the pods and services it caches (informer transforms).

The controller reads a pod's identity (name, namespace, uid, resourceVersion), labels, owner
references, creation and deletion timestamps, and from its status the phase, each container's
name, state and restart count, its reason, a ``PodScheduled=False`` condition (why a gang
scheduler has not placed it, D76) and a ``DisruptionTarget=True`` one (D102); of a service only the same metadata. Everything else (the spec, managed
fields, annotations, other conditions, IPs, images) is dropped as the object enters the cache, as client-go's transform functions do, which cuts the memory of a cached pod
by more than half; so are the ``training.kubeflow.org/*`` labels, which the operator writes for
others (Kueue, the SDKs) and selects nothing by. A reconciler that starts reading another field
must add it here.
"""

from __future__ import annotations

from typing import Any

from tf_operator.apis.common.v1.types import TRAINING_LABEL_PREFIX
from tf_operator.k8s.objects import Obj

_METADATA = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "labels",
    "ownerReferences",
    "creationTimestamp",
    "deletionTimestamp",
)
_CONTAINER_STATUS = ("name", "state", "restartCount")


def _metadata(obj: Obj) -> dict[str, Any]:
    m = obj.get("metadata") or {}
    kept = {k: m[k] for k in _METADATA if k in m}
    labels = kept.get("labels")
    if isinstance(labels, dict) and any(k.startswith(TRAINING_LABEL_PREFIX) for k in labels):
        kept["labels"] = {
            k: v for k, v in labels.items() if not k.startswith(TRAINING_LABEL_PREFIX)
        }
    return kept


def _container_statuses(statuses: Any) -> list[dict[str, Any]]:
    return [
        {k: cs[k] for k in _CONTAINER_STATUS if k in cs}
        for cs in statuses or ()
        if isinstance(cs, dict)
    ]


def _unscheduled(conditions: Any) -> dict[str, Any] | None:
    for condition in conditions if isinstance(conditions, list) else ():
        if (
            isinstance(condition, dict)
            and condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
        ):
            return {k: condition[k] for k in ("type", "status", "message") if k in condition}
    return None


def _disruption_target(conditions: Any) -> dict[str, Any] | None:
    """A ``DisruptionTarget=True`` condition: the pod was evicted, preempted, its node lost or
    shut down (the failure policy's disruptions, D102)."""
    for condition in conditions if isinstance(conditions, list) else ():
        if (
            isinstance(condition, dict)
            and condition.get("type") == "DisruptionTarget"
            and condition.get("status") == "True"
        ):
            return {k: condition[k] for k in ("type", "status", "reason") if k in condition}
    return None


def strip_pod(obj: Any) -> Any:
    """A cached pod with only what the controller reads (idempotent)."""
    if not isinstance(obj, dict):
        return obj
    status = obj.get("status") or {}
    kept: dict[str, Any] = {}
    if "phase" in status:
        kept["phase"] = status["phase"]
    for key in ("containerStatuses", "initContainerStatuses"):
        if status.get(key):
            kept[key] = _container_statuses(status[key])
    if "reason" in status:
        kept["reason"] = status["reason"]  # Evicted, Shutdown...: a disruption (D102)
    unscheduled = _unscheduled(status.get("conditions"))
    if unscheduled is not None:
        kept["conditions"] = [unscheduled]
    disrupted = _disruption_target(status.get("conditions"))
    if disrupted is not None:
        kept["conditions"] = [*kept.get("conditions", ()), disrupted]
    return {
        "apiVersion": obj.get("apiVersion", "v1"),
        "kind": obj.get("kind", "Pod"),
        "metadata": _metadata(obj),
        "status": kept,
    }


def strip_service(obj: Any) -> Any:
    """A cached service with only what the controller reads (idempotent)."""
    if not isinstance(obj, dict):
        return obj
    return {
        "apiVersion": obj.get("apiVersion", "v1"),
        "kind": obj.get("kind", "Service"),
        "metadata": _metadata(obj),
    }
