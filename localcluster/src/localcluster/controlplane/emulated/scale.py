"""The ``scale`` subresource (``autoscaling/v1 Scale``) for apps/v1 workloads and CRDs.

Built-in kinds keep replicas at ``.spec.replicas`` / ``.status.replicas`` and their selector in
``.spec.selector``; a CRD names its own paths in ``subresources.scale``. Reading builds a Scale
from the object; writing a Scale sets only the spec replicas path on the object.
"""

from __future__ import annotations

from typing import Any

from localcluster.apimachinery import errors
from localcluster.apimachinery.jsonpath import json_path
from localcluster.apimachinery.objects import meta
from localcluster.controlplane.emulated import crds
from localcluster.controlplane.emulated.resources import ResourceType

_BUILTIN = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}


def _paths(rt: ResourceType, version: str) -> dict[str, Any]:
    if rt.is_custom:
        return crds.scale_paths(rt.crd or {}, version)
    return _BUILTIN


def _selector_text(rt: ResourceType, version: str, obj: dict[str, Any]) -> str:
    if rt.is_custom:
        path = _paths(rt, version).get("labelSelectorPath")
        value = _at(obj, path)
        return value if isinstance(value, str) else ""
    labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _at(obj: dict[str, Any], path: str | None) -> Any:
    return json_path(obj, path) if path else None


def to_scale(rt: ResourceType, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    paths = _paths(rt, version)
    spec_replicas = _at(obj, paths.get("specReplicasPath"))
    m = meta(obj)
    status: dict[str, Any] = {"replicas": _at(obj, paths.get("statusReplicasPath")) or 0}
    selector = _selector_text(rt, version, obj)
    if selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: m[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in m
        },
        "spec": {
            "replicas": spec_replicas if spec_replicas is not None else (0 if rt.is_custom else 1)
        },
        "status": status,
    }


def apply_scale(rt: ResourceType, version: str, obj: dict[str, Any], scale: Any) -> dict[str, Any]:
    """A copy of ``obj`` with the replicas of ``scale`` written to the spec replicas path."""
    if not isinstance(scale, dict):
        raise errors.bad_request("the body must be an autoscaling/v1 Scale")
    # Go decodes a missing spec.replicas as 0: a Scale without it scales to zero
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        cause = errors.field_cause(
            "spec.replicas", f"Invalid value: {replicas!r}: must be a non-negative integer"
        )
        raise errors.invalid("Scale", "autoscaling", "scale", meta(obj).get("name", ""), [cause])
    if replicas < 0:  # ValidateScale's words
        cause = errors.field_cause(
            "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0"
        )
        raise errors.invalid("Scale", "autoscaling", "scale", meta(obj).get("name", ""), [cause])
    parts = [
        p for p in _paths(rt, version).get("specReplicasPath", ".spec.replicas").split(".") if p
    ]
    out = dict(obj)
    cur = out
    for p in parts[:-1]:
        cur[p] = dict(cur.get(p) or {})
        cur = cur[p]
    cur[parts[-1]] = replicas
    return out
