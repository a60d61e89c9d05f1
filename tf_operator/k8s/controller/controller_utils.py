"""Helpers every controller needs around its owned objects (Kubernetes' ``pkg/controller``).

``recheck_deletion_timestamp`` is ``RecheckDeletionTimestamp`` of ``controller_ref_manager.go``;
``object_key`` is ``KeyFunc`` for raw or typed objects; ``unwrap_tombstone`` is what every
delete handler does with a ``DeletedFinalStateUnknown``; ``group_of`` parses an ``apiVersion``
as apimachinery's ``ParseGroupVersion`` does. :class:`ControllerRefResolver` is the
``resolveControllerRef`` every Kubernetes controller repeats.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tf_operator.k8s.listers import Lister
from tf_operator.k8s.objects import Obj, get_controller_of, meta


def object_key(obj: Any) -> str:
    """The workqueue key ``<namespace>/<name>`` of an object (a dict or a typed object)."""
    m = meta(obj)
    namespace, name = m.get("namespace") or "", str(m.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


def unwrap_tombstone(obj: Any) -> Obj | None:
    """The object inside a ``DeletedFinalStateUnknown`` tombstone, or the object itself."""
    if isinstance(obj, dict):
        return obj
    inner = getattr(obj, "obj", None)
    return inner if isinstance(inner, dict) else None


def recheck_deletion_timestamp(get_object: Callable[[], Any]) -> Callable[[], None]:
    """A ``can_adopt`` check: fetch the owner again and refuse if it is being deleted."""

    def check() -> None:
        try:
            obj = get_object()
        except Exception as err:
            raise RuntimeError(f"can't recheck DeletionTimestamp: {err}") from err
        m = meta(obj)
        if m.get("deletionTimestamp"):
            raise RuntimeError(
                f"{m.get('namespace')}/{m.get('name')} has just been deleted at "
                f"{m['deletionTimestamp']}"
            )

    return check


def group_of(api_version: str) -> str:
    """The API group of an ``apiVersion`` (``""`` for the core group ``v1``)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


class ControllerRefResolver:
    """Traces an object to the key of its cached controller through its controller reference;
    the controller's kind, API group and UID must match."""

    def __init__(self, kind: str, group: str, controllers: Lister) -> None:
        self._kind = kind
        self._group = group
        self._controllers = controllers

    def owner_key(self, obj: Obj) -> str | None:
        ref = get_controller_of(obj)
        if ref is None or ref.get("kind") != self._kind:
            return None
        if group_of(ref.get("apiVersion", "")) != self._group:
            return None
        owner = self._controllers.get(meta(obj).get("namespace", ""), ref.get("name", ""))
        if owner is None or meta(owner).get("uid") != ref.get("uid"):
            return None
        return object_key(owner)
