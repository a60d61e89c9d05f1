"""Store and Indexer: a keyed, indexed cache of objects (client-go's ``cache``).

:class:`Indexer` puts a key function in front of :class:`ThreadSafeStore`, so
callers hand in objects and it works out their keys. It is what informers fill
and listers read; ``replace`` swaps the whole content atomically after a list.
Objects held here are shared: never mutate one, copy it first.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from tf_operator.k8s.cache.index import (
    NAMESPACE_INDEX,
    Indexers,
    meta_namespace_index_func,
)
from tf_operator.k8s.cache.keys import deletion_handling_meta_namespace_key_func
from tf_operator.k8s.cache.thread_safe_store import ThreadSafeStore

KeyFunc = Callable[[Any], str]


class Indexer:
    """A thread-safe store of objects by key, with named secondary indices."""

    def __init__(
        self,
        key_func: KeyFunc = deletion_handling_meta_namespace_key_func,
        indexers: Indexers | None = None,
    ) -> None:
        self.key_func = key_func
        self._store = ThreadSafeStore(indexers)

    # ---- Store ------------------------------------------------------------------
    def add(self, obj: Any) -> None:
        self._store.add(self.key_func(obj), obj)

    def update(self, obj: Any) -> None:
        self._store.update(self.key_func(obj), obj)

    def delete(self, obj: Any) -> None:
        self._store.delete(self.key_func(obj))

    def list(self) -> builtins.list[Any]:
        return self._store.list()

    def list_keys(self) -> builtins.list[str]:
        return self._store.list_keys()

    def get(self, obj: Any) -> Any | None:
        """The stored object with ``obj``'s key, or None."""
        return self._store.get(self.key_func(obj))

    def get_by_key(self, key: str) -> Any | None:
        return self._store.get(key)

    def replace(self, items: builtins.list[Any], resource_version: str = "") -> None:
        self._store.replace({self.key_func(obj): obj for obj in items})

    def resync(self) -> None:
        """Nothing to do for a plain store; present so a Store can stand in for a queue."""

    def __len__(self) -> int:
        return len(self._store)

    # ---- Indexer ----------------------------------------------------------------
    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        return self._store.index(index_name, obj)

    def by_index(self, index_name: str, index_value: str) -> builtins.list[Any]:
        return self._store.by_index(index_name, index_value)

    def index_keys(self, index_name: str, index_value: str) -> builtins.list[str]:
        return self._store.index_keys(index_name, index_value)

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        return self._store.list_index_func_values(index_name)

    def get_indexers(self) -> Indexers:
        return self._store.get_indexers()

    def add_indexers(self, indexers: Indexers) -> None:
        self._store.add_indexers(indexers)


def new_store(key_func: KeyFunc = deletion_handling_meta_namespace_key_func) -> Indexer:
    """A store with no indices."""
    return Indexer(key_func)


def new_indexer(
    key_func: KeyFunc = deletion_handling_meta_namespace_key_func,
    indexers: Indexers | None = None,
) -> Indexer:
    """An indexer; with no ``indexers`` given it carries the namespace index."""
    if indexers is None:
        indexers = {NAMESPACE_INDEX: meta_namespace_index_func}
    return Indexer(key_func, indexers)
