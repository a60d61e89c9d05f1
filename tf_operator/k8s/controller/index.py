"""Namespaced index functions for a controller's lookups of the objects it owns.

Like ``tools/cache``'s label and controller-uid index functions, but each value is prefixed
with the object's namespace, so one index lookup is scoped to a namespace.
"""

from __future__ import annotations

from typing import Any

from tf_operator.k8s.cache import SharedIndexInformer
from tf_operator.k8s.cache.index import Indexers, IndexFunc
from tf_operator.k8s.objects import get_controller_of, labels_of, meta


def namespaced_controller_uid_index_func(obj: Any) -> list[str]:
    """File an object under ``namespace/uid`` of its controlling owner, if it has one."""
    if not isinstance(obj, dict):
        return []
    ref = get_controller_of(obj)
    uid = None if ref is None else ref.get("uid")
    if uid is None:
        return []  # claims compare uids, so a ref without one is nobody's
    return [f"{meta(obj).get('namespace') or ''}/{uid}"]


def namespaced_label_index_func(label_key: str) -> IndexFunc:
    """An index function filing objects under ``namespace/<label value>`` (absent: not filed)."""

    def index(obj: Any) -> list[str]:
        if not isinstance(obj, dict):
            return []
        value = labels_of(obj).get(label_key)
        if value is None:
            return []
        return [f"{meta(obj).get('namespace') or ''}/{value}"]

    return index


def add_missing_indexers(informer: SharedIndexInformer, indexers: Indexers) -> None:
    """Register the indexers an informer (not yet started) lacks.

    Controllers sharing an informer register identical functions under identical names, so
    a second registration is skipped rather than treated as a conflict.
    """
    present = informer.get_indexer().get_indexers()
    missing = {name: fn for name, fn in indexers.items() if name not in present}
    if missing:
        informer.add_indexers(missing)
