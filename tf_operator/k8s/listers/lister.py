"""Generic listers over an Indexer (client-go's ``listers.go`` and the generated listers)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from typing import Any

from tf_operator.k8s import labels as labelsmod
from tf_operator.k8s.cache.index import NAMESPACE_INDEX
from tf_operator.k8s.objects import Obj

SelectorLike = labelsmod.Selector | str | Mapping[str, str] | None


def as_selector(selector: SelectorLike) -> labelsmod.Selector:
    """A Selector from a Selector, a selector string, a label set, or None (everything)."""
    if selector is None:
        return labelsmod.EVERYTHING
    if isinstance(selector, labelsmod.Selector):
        return selector
    if isinstance(selector, str):
        return labelsmod.parse_selector(selector)
    return labelsmod.selector_from_set(selector)


def _labels(obj: Any) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def list_all(indexer: Any, selector: SelectorLike, append: Callable[[Any], None]) -> None:
    """Call ``append`` for every cached object the selector matches."""
    sel = as_selector(selector)
    everything = sel.empty()
    for obj in indexer.list():
        if everything or sel.matches(_labels(obj)):
            append(obj)


def list_all_by_namespace(
    indexer: Any, namespace: str, selector: SelectorLike, append: Callable[[Any], None]
) -> None:
    """Like :func:`list_all` within one namespace ("" or None: all namespaces)."""
    if not namespace:
        list_all(indexer, selector, append)
        return
    sel = as_selector(selector)
    everything = sel.empty()
    if NAMESPACE_INDEX in indexer.get_indexers():
        candidates = indexer.by_index(NAMESPACE_INDEX, namespace)
    else:
        candidates = [
            o for o in indexer.list() if (o.get("metadata") or {}).get("namespace") == namespace
        ]
    for obj in candidates:
        if everything or sel.matches(_labels(obj)):
            append(obj)


class Lister:
    """Objects of one resource from an informer's indexer."""

    def __init__(self, indexer: Any) -> None:
        self.indexer = indexer

    def list(self, selector: SelectorLike = None) -> builtins.list[Obj]:
        out: builtins.list[Obj] = []
        list_all(self.indexer, selector, out.append)
        return out

    def get(self, namespace: str | None, name: str) -> Obj | None:
        """The cached object, or None. ``namespace`` is ignored-when-empty (cluster scope)."""
        key = f"{namespace}/{name}" if namespace else name
        found: Obj | None = self.indexer.get_by_key(key)
        return found

    def namespaced(self, namespace: str) -> NamespaceLister:
        return NamespaceLister(self.indexer, namespace)


class NamespaceLister:
    """Objects of one resource within one namespace."""

    def __init__(self, indexer: Any, namespace: str) -> None:
        self.indexer = indexer
        self.namespace = namespace

    def list(self, selector: SelectorLike = None) -> builtins.list[Obj]:
        out: builtins.list[Obj] = []
        list_all_by_namespace(self.indexer, self.namespace, selector, out.append)
        return out

    def get(self, name: str) -> Obj | None:
        key = f"{self.namespace}/{name}" if self.namespace else name
        found: Obj | None = self.indexer.get_by_key(key)
        return found
