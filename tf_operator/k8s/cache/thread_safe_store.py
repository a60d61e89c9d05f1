"""A dict of objects plus secondary indices, safe to share between threads.

All reads and writes take one lock, so an index never disagrees with the
items. Objects are stored by reference and must be treated as read-only by
everyone who reads them from the cache (client-go's rule too): mutate a deep
copy. Index values are kept as sets of keys per index value; an update whose index values
did not change leaves that index alone (client-go skips the common case of one unchanged value).
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable
from typing import Any

from tf_operator.k8s.cache.index import Indexers, IndexFunc


class ThreadSafeStore:
    def __init__(self, indexers: Indexers | None = None) -> None:
        self._lock = threading.RLock()
        self._items: dict[str, Any] = {}
        self._indexers: Indexers = dict(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}

    # ---- writes -----------------------------------------------------------------
    def add(self, key: str, obj: Any) -> None:
        self.update(key, obj)

    def update(self, key: str, obj: Any) -> None:
        with self._lock:
            old = self._items.get(key)
            self._items[key] = obj
            self._update_indices(old, obj, key)

    def delete(self, key: str) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._delete_from_indices(old, key)

    def replace(self, items: dict[str, Any]) -> None:
        """Swap the whole content for ``items`` and rebuild every index."""
        with self._lock:
            self._items = dict(items)
            self._indices = {name: {} for name in self._indexers}
            for key, obj in self._items.items():
                self._update_indices(None, obj, key)

    def add_indexers(self, indexers: Indexers) -> None:
        """Add index functions; existing items are indexed by them at once."""
        with self._lock:
            clash = set(indexers) & set(self._indexers)
            if clash:
                raise ValueError(f"indexer conflict: {sorted(clash)}")
            self._indexers.update(indexers)
            for name, fn in indexers.items():
                index: dict[str, set[str]] = {}
                self._indices[name] = index
                for key, obj in self._items.items():
                    for value in fn(obj):
                        index.setdefault(value, set()).add(key)

    # ---- reads ------------------------------------------------------------------
    def get(self, key: str) -> Any | None:
        with self._lock:
            return self._items.get(key)

    def list(self) -> builtins.list[Any]:
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def get_indexers(self) -> Indexers:
        with self._lock:
            return dict(self._indexers)

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        """Objects sharing any index value with ``obj`` under ``index_name``."""
        with self._lock:
            fn = self._index_func(index_name)
            index = self._indices[index_name]
            keys: set[str] = set()
            for value in fn(obj):
                keys |= index.get(value, set())
            return [self._items[k] for k in keys]

    def by_index(self, index_name: str, index_value: str) -> builtins.list[Any]:
        with self._lock:
            self._index_func(index_name)
            keys = self._indices[index_name].get(index_value, ())
            return [self._items[k] for k in keys]

    def index_keys(self, index_name: str, index_value: str) -> builtins.list[str]:
        with self._lock:
            self._index_func(index_name)
            return list(self._indices[index_name].get(index_value, ()))

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        with self._lock:
            return list(self._indices.get(index_name, {}))

    # ---- internals -------------------------------------------------------------
    def _index_func(self, index_name: str) -> IndexFunc:
        try:
            return self._indexers[index_name]
        except KeyError:
            raise KeyError(f"index {index_name!r} does not exist") from None

    def _update_indices(self, old: Any, new: Any, key: str) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            values = fn(new)
            if old is not None:
                old_values = fn(old)
                if old_values == values:
                    continue  # the common update: the key is filed under the same values
                _remove(index, old_values, key)
            for value in values:
                bucket = index.get(value)
                if bucket is None:
                    index[value] = {key}
                else:
                    bucket.add(key)

    def _delete_from_indices(self, obj: Any, key: str) -> None:
        for name, fn in self._indexers.items():
            _remove(self._indices[name], fn(obj), key)


def _remove(index: dict[str, set[str]], values: Iterable[str], key: str) -> None:
    """File ``key`` under none of ``values`` any more; an emptied value goes."""
    for value in values:
        bucket = index.get(value)
        if bucket is not None:
            bucket.discard(key)
            if not bucket:
                del index[value]
