"""Object keys: ``namespace/name`` (or ``name`` when cluster-scoped).

Every store, queue and lister agrees on this key, as client-go's
``MetaNamespaceKeyFunc``. The deletion-handling variant also accepts a
``DeletedFinalStateUnknown`` tombstone and returns the key it carries.
"""

from __future__ import annotations

from typing import Any


class KeyFuncError(ValueError):
    """An object from which no key can be computed (client-go's ``KeyError``)."""


def meta_namespace_key_func(obj: Any) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects; a str is its own key."""
    if isinstance(obj, str):
        return obj
    try:
        meta = obj["metadata"]
        name = meta["name"]
    except (KeyError, TypeError):
        raise KeyFuncError(f"object has no metadata.name: {obj!r:.200}") from None
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else name


def deletion_handling_meta_namespace_key_func(obj: Any) -> str:
    """Like :func:`meta_namespace_key_func`, but a tombstone yields its recorded key."""
    key = getattr(obj, "key", None)
    if isinstance(key, str) and hasattr(obj, "obj"):
        return key
    return meta_namespace_key_func(obj)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """``"ns/name"`` -> ``("ns", "name")``; ``"name"`` -> ``("", "name")``."""
    parts = key.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")
