"""Index functions: how an Indexer files objects under secondary keys.

An index function maps an object to the list of values it is filed under
(``IndexFunc``); an ``Indexers`` dict names several. The namespace index is
built into every informer's indexer, so listers can answer "all pods of
namespace X" without scanning the whole cache.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

IndexFunc = Callable[[Any], list[str]]
Indexers = dict[str, IndexFunc]

NAMESPACE_INDEX = "namespace"


def meta_namespace_index_func(obj: Any) -> list[str]:
    """File an object under its namespace (cluster-scoped objects under "")."""
    meta = obj.get("metadata") or {} if isinstance(obj, dict) else {}
    return [meta.get("namespace") or ""]


def label_index_func(label: str) -> IndexFunc:
    """An index function filing objects under the value of one label (absent: not filed)."""

    def index(obj: Any) -> list[str]:
        labels = ((obj.get("metadata") or {}).get("labels") or {}) if isinstance(obj, dict) else {}
        return [labels[label]] if label in labels else []

    return index


def controller_uid_index_func(obj: Any) -> list[str]:
    """File an object under the uid of its controlling owner, if any."""
    meta = (obj.get("metadata") or {}) if isinstance(obj, dict) else {}
    return [ref["uid"] for ref in meta.get("ownerReferences") or [] if ref.get("controller")]
