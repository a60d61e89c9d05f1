"""Kubernetes objects as plain JSON dicts, and the metadata accessors every layer uses.

Objects travel through the client, the informers and the controllers as the dicts the API
server sent (``Obj``). Typed views exist only where a layer owns the schema (the TFJob API in
``tf_operator.apis``); everything else reads metadata through these helpers, which also accept
a typed object that carries a ``metadata`` dict.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

Obj = dict[str, Any]


def json_copy(obj: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, strings, numbers), several times faster than
    ``copy.deepcopy``; anything orjson cannot encode falls back to ``copy.deepcopy``."""
    try:
        return orjson.loads(orjson.dumps(obj))
    except TypeError:
        return copy.deepcopy(obj)


def meta(obj: Any) -> dict[str, Any]:
    """The metadata dict of a dict object or of a typed object with ``.metadata``."""
    if isinstance(obj, dict):
        value = obj.get("metadata")
    else:
        value = getattr(obj, "metadata", None)
    return value if isinstance(value, dict) else {}


def same_but_version(old: Obj, cur: Obj) -> bool:
    """True when two versions of an object differ in nothing but ``metadata.resourceVersion``
    (a write that changed only fields an informer's transform dropped, say)."""
    if old.keys() != cur.keys():
        return False
    for key, value in cur.items():
        if key != "metadata":
            if old[key] != value:
                return False
            continue
        before = old[key]
        if not isinstance(value, dict) or not isinstance(before, dict):
            if before != value:
                return False
        elif before.keys() != value.keys() or any(
            before[k] != v for k, v in value.items() if k != "resourceVersion"
        ):
            return False
    return True


def labels_of(obj: Any) -> dict[str, str]:
    value = meta(obj).get("labels")
    return value if isinstance(value, dict) else {}


def get_controller_of(obj: Any) -> dict[str, Any] | None:
    """The owner reference with ``controller: true``, if any."""
    for ref in meta(obj).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def namespaced_name(obj: Any) -> str:
    """``namespace/name`` of an object (as a log or error message names it)."""
    m = meta(obj)
    return f"{m.get('namespace', '')}/{m.get('name', '')}"
