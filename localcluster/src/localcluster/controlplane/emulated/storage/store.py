"""Storage under the registry: objects, the resourceVersion counter, history and watches.

The ``Store`` is to the ``Registry`` what etcd is to kube-apiserver: the registry *has* one and
puts the API's semantics on top; the store knows nothing of validation, defaulting or deletion
rules, and its objects are the stored dicts themselves (shared: readers never mutate them).
One re-entrant lock (``lock``) guards everything. ``commit`` is the only way state changes: it takes the
next value of the global resourceVersion counter, stores a fresh dict (stored dicts are never
mutated afterwards, so package-internal readers may serialise them without copying), appends an
``Event`` to the bounded history ring, offers it to the watches of that resource (never blocking;
see ``watch``) and hands it to the commit observers (the registry's garbage collector). This
module knows nothing of the collector, so ``store`` -> ``gc`` -> ``registry`` is no cycle. Indexes
by uid and by owner uid let the collector find dependents in O(dependents).

Stored objects are shared, not copied, by everything that reads them in this process (the
HTTP layer, RBAC, the cluster's own informers), so a reader that mutated one would corrupt
the API's state unseen. With ``LOCALCLUSTER_CHECK_SHARED=1`` in the environment (the test
suite sets it) the store fingerprints what it commits and raises when an object it replaces
or still holds at ``verify_unchanged`` differs from its fingerprint (``SharedObjectCheck``).

Each resource's keys are also kept sorted in etcd order, so a LIST page costs O(log n + page);
a paginated list reads every page from a ``paging.Snapshot`` at its first page's RV (kept, with
copy-on-write of the live dict and key list, or rebuilt by undoing the history). History is the
emulator's etcd compaction: a watch, a list at an exact RV or a list ``continue`` from an RV
older than the history gets 410 Expired (kube-apiserver's watch cache can serve them past an
etcd compaction: divergence D194).
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from localcluster.apimachinery import deepjson, errors
from localcluster.apimachinery.gvr import GVR
from localcluster.apimachinery.objects import clone, format_time, meta
from localcluster.apimachinery.selectors import combine, parse_field_selector, parse_label_selector
from localcluster.controlplane.emulated.resources import ResourceType, builtin_types
from localcluster.controlplane.emulated.storage import paging
from localcluster.controlplane.emulated.storage.paging import Key, Snapshot
from localcluster.controlplane.emulated.storage.watch import Event, Watch

log = logging.getLogger(__name__)

DEFAULT_WATCH_CAPACITY = 20000  # queued events before a lagging watch is dropped
SNAPSHOTS_KEPT = 16  # past list snapshots kept for the continue tokens of paginated lists
_EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)
_EXPIRED_LIST = "The resourceVersion for the provided list is too old."

Ref = tuple[tuple[str, str], str, str]  # (storage_key, namespace, name)
StorageKey = tuple[str, str]  # (group, plural): one resource, whatever version it is served at
CHECK_SHARED_ENV = "LOCALCLUSTER_CHECK_SHARED"


class SharedObjectCheck:
    """Fingerprints of the stored objects, to catch one mutated after it was committed."""

    def __init__(self) -> None:
        self._prints: dict[tuple[StorageKey, Key], str] = {}

    @staticmethod
    def _print(obj: dict[str, Any]) -> str:
        try:
            return json.dumps(obj)
        except RecursionError:  # nested beyond the standard encoder (kube-apiserver takes 10,000)
            return deepjson.dumps(obj).decode()

    def replaced(
        self, sk: StorageKey, key: Key, old: dict[str, Any] | None, new: dict[str, Any] | None
    ) -> None:
        """``old`` (the object stored at ``key``, or None) gives way to ``new`` (None: gone)."""
        if old is not None:
            self._check(sk, key, old)
        if new is None:
            self._prints.pop((sk, key), None)
        else:
            self._prints[(sk, key)] = self._print(new)

    def _check(self, sk: StorageKey, key: Key, obj: dict[str, Any]) -> None:
        expected = self._prints.get((sk, key))
        if expected is not None and self._print(obj) != expected:
            raise AssertionError(
                f"stored {sk[1]} {'/'.join(filter(None, key))} was mutated after it was "
                f"committed: {expected} became {self._print(obj)}"
            )

    def verify(self, store: Mapping[StorageKey, Mapping[Key, dict[str, Any]]]) -> None:
        for sk, objects in store.items():
            for key, obj in objects.items():
                self._check(sk, key, obj)


class ListPage(NamedTuple):
    """One page of a LIST: the stored objects (shared: never mutate them), the list's RV, the
    continue token for the next page (None on the last) and how many objects remain after it."""

    items: list[dict[str, Any]]
    resource_version: str
    continue_token: str | None
    remaining: int | None


class Store:
    """Objects by resource, the RV counter, history, watches and the uid/owner indexes."""

    def __init__(self, watch_history: int = 10000, clock: Callable[[], float] = time.time) -> None:
        self.lock = threading.RLock()
        self.clock = clock
        self._rv = 0
        self._types: dict[tuple[str, str], ResourceType] = {}
        self._by_gvr: dict[GVR, ResourceType] = {}
        self._store: dict[tuple[str, str], dict[Key, dict[str, Any]]] = {}
        # per resource, its store keys in etcd order (``paging.sort_key``); a resource in
        # ``_shared`` has its dict and key list frozen in a snapshot: copied before the next write
        self._keys: dict[tuple[str, str], list[str]] = {}
        self._shared: set[tuple[str, str]] = set()
        self._snapshots: OrderedDict[tuple[tuple[str, str], int], Snapshot] = OrderedDict()
        self._history: deque[Event] = deque(maxlen=max(1, watch_history))
        self._compacted_rv = 0
        self._watchers: dict[tuple[str, str], set[Watch]] = {}
        self._by_uid: dict[str, Ref] = {}
        self._dependents: dict[str, set[Ref]] = {}
        self.watch_capacity = DEFAULT_WATCH_CAPACITY
        self.types_generation = 0
        # called with every committed event, lock held; must only queue work (see gc.observe)
        self.commit_observers: list[Callable[[ResourceType, Event], None]] = []
        checking = os.environ.get(CHECK_SHARED_ENV, "") not in ("", "0")
        self._shared_check = SharedObjectCheck() if checking else None
        for rt in builtin_types():
            self.register_type(rt)

    # ------------------------------------------------------------------ types and lookup
    def register_type(self, rt: ResourceType) -> None:
        with self.lock:
            old = self._types.get(rt.storage_key)
            if old is not None:
                for v in old.versions:
                    self._by_gvr.pop((old.group, v, old.plural), None)
            self._types[rt.storage_key] = rt
            for v in rt.versions:
                self._by_gvr[(rt.group, v, rt.plural)] = rt
            self._store.setdefault(rt.storage_key, {})
            self._keys.setdefault(rt.storage_key, [])
            self.types_generation += 1

    def unregister_type(self, storage_key: tuple[str, str]) -> None:
        rt = self._types.pop(storage_key, None)
        if rt is None:
            return
        for v in rt.versions:
            self._by_gvr.pop((rt.group, v, rt.plural), None)
        self.types_generation += 1
        for w in list(self._watchers.pop(storage_key, ())):
            w.close("resource type removed")

    def resource_types(self) -> list[ResourceType]:
        with self.lock:
            return list(self._types.values())

    def resolve(self, gvr: GVR) -> ResourceType:
        """The resource type served at ``gvr``; 404 when there is none."""
        rt = self._by_gvr.get(tuple(gvr))  # type: ignore[arg-type]  # a caller's list [g, v, r] finds its type too
        if rt is None:
            raise errors.resource_not_found()
        return rt

    @property
    def resource_version(self) -> int:
        return self._rv

    def present(self, rt: ResourceType, version: str, obj: dict[str, Any]) -> dict[str, Any]:
        """``obj`` as served at ``version`` (rewrites apiVersion; shares everything else)."""
        api_version = rt.api_version(version)
        if obj.get("apiVersion") == api_version:
            return obj
        out = dict(obj)
        out["apiVersion"] = api_version
        return out

    def key_for(self, rt: ResourceType, namespace: str | None, name: str) -> Key:
        if rt.namespaced:
            if not namespace:
                raise errors.bad_request("a namespace is required for namespaced resources")
            return (namespace, name)
        return ("", name)

    def now(self) -> str:
        return format_time(self.clock())

    def type_at(self, storage_key: StorageKey) -> ResourceType | None:
        """The resource type stored under ``storage_key``, if registered."""
        return self._types.get(storage_key)

    # ------------------------------------------------------------------ read
    def stored(self, storage_key: StorageKey, key: Key) -> dict[str, Any] | None:
        """The stored object at ``key`` (shared: never mutate it), or None."""
        return self._store[storage_key].get(key)

    def objects_of(self, storage_key: StorageKey) -> Mapping[Key, dict[str, Any]]:
        """Every stored object of one resource by key; read it with the lock held."""
        return self._store.get(storage_key, {})

    def has_objects_in(self, namespace: str) -> bool:
        """Whether any namespaced resource still has an object in ``namespace``."""
        with self.lock:
            return any(
                key[0] == namespace
                for rt in self._types.values()
                if rt.namespaced
                for key in self._store[rt.storage_key]
            )

    def get(self, gvr: GVR, namespace: str | None, name: str) -> dict[str, Any]:
        rt = self.resolve(gvr)
        with self.lock:
            obj = self._store[rt.storage_key].get(self.key_for(rt, namespace, name))
        if obj is None:
            raise errors.not_found(rt.group, rt.plural, name)
        return self.present(rt, gvr[1], obj)

    def list_page(
        self,
        gvr: GVR,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: int | None = None,
    ) -> ListPage:
        """Reads the latest state, or exactly ``resource_version`` (410 once compacted away); a
        continue token reads at the RV of the list it continues (see ``paging``)."""
        rt = self.resolve(gvr)
        pred = combine(parse_label_selector(label_selector), parse_field_selector(field_selector))
        ns = namespace if rt.namespaced and namespace else None
        sk = rt.storage_key
        with self.lock:
            start = None
            if continue_token:
                token_rv, start = paging.decode_continue(continue_token, ns)
                snap = self._continued_snapshot(sk, token_rv, start, ns)
            else:
                snap = self._snapshot(sk, resource_version, _EXPIRED_LIST)
            page = paging.read_page(snap, ns, pred, limit, start)
            if page.token is not None:
                self._keep(sk, snap)
        version = gvr[1]
        items = [self.present(rt, version, o) for o in page.items]
        return ListPage(items, str(snap.rv), page.token, page.remaining)

    def _continued_snapshot(
        self, sk: tuple[str, str], token_rv: int, start: str, ns: str | None
    ) -> Snapshot:
        """The snapshot a continue token reads; once compacted, 410 with a token that goes on
        at the latest RV (an inconsistent list, which the client may choose)."""
        if token_rv == paging.LATEST:
            return self._snapshot(sk, None, "")
        try:
            return self._snapshot(sk, token_rv, _EXPIRED_CONTINUE)
        except errors.StatusError as e:
            if e.code == 410:
                relative = paging.relative(start, ns)
                e.status["metadata"]["continue"] = paging.encode_continue(paging.LATEST, relative)
            raise

    def _snapshot(self, sk: tuple[str, str], rv: int | None, expired: str) -> Snapshot:
        """The objects of resource ``sk`` at ``rv`` (None: now; lock held). The current state
        is a live view, valid under the lock until ``_keep`` freezes it; a past state comes
        from the kept snapshots or is rebuilt by undoing the history after ``rv``."""
        if rv is None or rv == self._rv:
            return Snapshot(self._rv, self._keys[sk], self._store[sk])
        if rv > self._rv:
            raise errors.StatusError(
                500, "Unknown", "etcdserver: mvcc: required revision is a future revision"
            )
        if rv < self._compacted_rv:
            raise errors.gone(expired)
        kept = self._snapshots.get((sk, rv))
        if kept is not None:
            self._snapshots.move_to_end((sk, rv))
            return kept
        objects, keys = dict(self._store[sk]), list(self._keys[sk])
        for ev in reversed(self._history):
            if ev.rv <= rv:
                break
            if ev.storage_key != sk:
                continue
            key = (ev.namespace, meta(ev.obj)["name"])
            if ev.type == "ADDED":
                del objects[key]
                del keys[bisect.bisect_left(keys, paging.sort_key(key))]
            elif ev.old is not None:
                if key not in objects:
                    bisect.insort(keys, paging.sort_key(key))
                objects[key] = ev.old
        return Snapshot(rv, keys, objects)

    def forget_snapshots(self) -> None:
        """Drop the kept list snapshots, as if later lists had pushed them out: a continue
        token then reads a state rebuilt from the history."""
        with self.lock:
            self._snapshots.clear()

    def _keep(self, sk: tuple[str, str], snap: Snapshot) -> None:
        """Keep ``snap`` for the continue tokens of its list (lock held); a live view is frozen:
        the next write to ``sk`` copies the dict and key list first."""
        if snap.objects is self._store[sk]:
            self._shared.add(sk)
        self._snapshots[(sk, snap.rv)] = snap
        self._snapshots.move_to_end((sk, snap.rv))
        while len(self._snapshots) > SNAPSHOTS_KEPT:
            self._snapshots.popitem(last=False)

    def drop_storage(self, sk: tuple[str, str]) -> None:
        """Forget a resource's objects, key order and snapshots (its type is gone; lock held)."""
        self._store.pop(sk, None)
        self._keys.pop(sk, None)
        self._shared.discard(sk)
        for kept in [k for k in self._snapshots if k[0] == sk]:
            del self._snapshots[kept]

    # ------------------------------------------------------------------ watch
    def watch(
        self,
        gvr: GVR,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch:
        """Start a watch: replay from ``resource_version`` (or synthetic ADDED events when it is
        empty or "0"), then live events. 410 Expired when that RV has left the history."""
        rt = self.resolve(gvr)
        pred = combine(parse_label_selector(label_selector), parse_field_selector(field_selector))
        version = gvr[1]
        ns = namespace if rt.namespaced else None
        with self.lock:
            w = Watch(
                ns,
                pred,
                lambda o: self.present(rt, version, o),
                self.watch_capacity,
                self._remove_watch,
                rt.storage_key,
            )
            if resource_version in (None, "", "0"):
                initial = self._initial_events(rt.storage_key, ns, pred)
                w.preload(initial)
                w.initial_count = len(initial)
            else:
                start = self._start_rv(resource_version)
                if start < self._rv:
                    w.preload(self._replay(w, start))
            w.progress_rv = w.start_rv = self._rv
            self._watchers.setdefault(rt.storage_key, set()).add(w)
        return w

    def _initial_events(
        self, sk: tuple[str, str], ns: str | None, pred: Callable[[dict[str, Any]], bool] | None
    ) -> list[tuple[str, Event]]:
        """Synthetic ADDED events for the objects a watch from "now" starts with (lock held)."""
        snap = self._snapshot(sk, None, "")
        lo, hi = snap.span(ns)
        initial: list[tuple[str, Event]] = []
        for text in snap.keys[lo:hi]:
            key = paging.store_key(text)
            obj = snap.objects[key]
            if pred is None or pred(obj):
                rv = int(meta(obj).get("resourceVersion") or 0)
                initial.append(("ADDED", Event(rv, "ADDED", sk, key[0], obj)))
        return initial

    def _start_rv(self, resource_version: str) -> int:
        """The RV a watch resumes after: 400 when not a number, 410 when compacted away."""
        try:
            start = int(resource_version)
        except ValueError as e:
            raise errors.bad_request(f"invalid resource version: {resource_version}") from e
        if start < self._compacted_rv:
            raise errors.gone(f"too old resource version: {start} ({self._compacted_rv + 1})")
        return start

    def _replay(self, w: Watch, start: int) -> list[tuple[str, Event]]:
        """The history events after ``start`` that concern ``w`` (lock held)."""
        replay = []
        for ev in self._history:
            if ev.rv > start and ev.storage_key == w.storage_key:
                etype = w.translate(ev)
                if etype is not None:
                    replay.append((etype, ev))
        return replay

    def _remove_watch(self, w: Watch) -> None:
        with self.lock:
            watchers = self._watchers.get(w.storage_key)
            if watchers is not None:
                watchers.discard(w)

    def bookmark_rv(self, w: Watch) -> int | None:
        """The RV a bookmark may carry for ``w`` now: None while it still has queued events."""
        with self.lock:
            if w.pending():
                return None
            return w.progress_rv

    def drop_watches(self, reason: str = "dropped by fault injection") -> int:
        with self.lock:
            all_watches = [w for ws in self._watchers.values() for w in ws]
            self._watchers = {}
        for w in all_watches:
            w.close(reason)
        return len(all_watches)

    def compact(self) -> None:
        """Forget all history: a watch or continue from any earlier RV now gets 410."""
        with self.lock:
            self._history.clear()
            self._compacted_rv = self._rv

    def watch_count(self) -> int:
        with self.lock:
            return sum(len(ws) for ws in self._watchers.values())

    # ------------------------------------------------------------------ commit
    def read_with(self, sk: StorageKey, change: Callable[[dict[str, Any]], Any]) -> int:
        """Replace each stored object of ``sk`` by a copy ``change`` mutated, where that differs,
        without a write: the same resourceVersion, no history, no watch event (what an API
        server reads differently from unchanged storage; lock held). Returns how many changed."""
        changed = 0
        for key, obj in list(self._store.get(sk, {}).items()):
            new = clone(obj)  # stored objects are shared with readers: never mutated
            change(new)
            if new == obj:
                continue
            store, _ = self._writable(sk)
            if self._shared_check is not None:
                self._shared_check.replaced(sk, key, obj, new)
            store[key] = new
            changed += 1
        return changed

    def commit(
        self,
        rt: ResourceType,
        key: Key,
        obj: dict[str, Any],
        etype: str,
        old: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Store ``obj`` (a fresh dict owned by the registry) under the next RV; lock held."""
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        if self._shared_check is not None:
            self._shared_check.replaced(
                rt.storage_key, key, old, None if etype == "DELETED" else obj
            )
        store, keys = self._writable(rt.storage_key)
        ref: Ref = (rt.storage_key, key[0], key[1])
        if old is not None:
            self._unindex(ref, old)
        if etype == "DELETED":
            if store.pop(key, None) is not None:
                del keys[bisect.bisect_left(keys, paging.sort_key(key))]
        else:
            if key not in store:
                bisect.insort(keys, paging.sort_key(key))
            store[key] = obj
            self._index(ref, obj)
        ev = Event(self._rv, etype, rt.storage_key, key[0], obj, old)
        if len(self._history) == self._history.maxlen:
            self._compacted_rv = self._history[0].rv
        self._history.append(ev)
        for w in list(self._watchers.get(rt.storage_key, ())):
            w.offer(ev)
            if w.closed:
                self._watchers[rt.storage_key].discard(w)
                log.info("dropped watch on %s: %s", rt.plural, w.close_reason)
        for observe in self.commit_observers:
            observe(rt, ev)
        return obj

    def _writable(self, sk: tuple[str, str]) -> tuple[dict[Key, dict[str, Any]], list[str]]:
        """The dict and key list of ``sk`` to change, copied first if a snapshot shares them."""
        if sk in self._shared:
            self._shared.discard(sk)
            self._store[sk] = dict(self._store[sk])
            self._keys[sk] = list(self._keys[sk])
        return self._store[sk], self._keys[sk]

    def _index(self, ref: Ref, obj: dict[str, Any]) -> None:
        m = meta(obj)
        if m.get("uid"):
            self._by_uid[m["uid"]] = ref
        for r in m.get("ownerReferences") or []:
            if isinstance(r, dict) and r.get("uid"):
                self._dependents.setdefault(r["uid"], set()).add(ref)

    def _unindex(self, ref: Ref, obj: dict[str, Any]) -> None:
        m = meta(obj)
        if m.get("uid") and self._by_uid.get(m["uid"]) == ref:
            del self._by_uid[m["uid"]]
        for r in m.get("ownerReferences") or []:
            deps = self._dependents.get(r.get("uid", "")) if isinstance(r, dict) else None
            if deps is not None:
                deps.discard(ref)
                if not deps:
                    del self._dependents[r["uid"]]

    def verify_unchanged(self) -> None:
        """With ``LOCALCLUSTER_CHECK_SHARED`` set: raise if a stored object was mutated since
        it was committed (see module docstring); nothing otherwise."""
        if self._shared_check is not None:
            with self.lock:
                self._shared_check.verify(self._store)

    # helpers for the garbage collector -------------------------------------------------
    def uid_exists(self, uid: str) -> bool:
        return uid in self._by_uid

    def has_dependents(self, uid: str) -> bool:
        return bool(self._dependents.get(uid))

    def namespace_terminating(self, namespace: str) -> bool:
        ns = self._store[("", "namespaces")].get(("", namespace))
        return ns is not None and bool(meta(ns).get("deletionTimestamp"))

    def lookup_uid(self, uid: str) -> tuple[ResourceType, dict[str, Any]] | None:
        with self.lock:
            ref = self._by_uid.get(uid)
            if ref is None:
                return None
            rt = self._types.get(ref[0])
            obj = self._store.get(ref[0], {}).get((ref[1], ref[2]))
            return (rt, obj) if rt is not None and obj is not None else None

    def dependents_of(self, uid: str) -> list[tuple[ResourceType, dict[str, Any]]]:
        with self.lock:
            out = []
            for sk, ns, name in self._dependents.get(uid, ()):
                rt = self._types.get(sk)
                obj = self._store.get(sk, {}).get((ns, name))
                if rt is not None and obj is not None:
                    out.append((rt, obj))
            return out

    def objects_in_namespace(self, namespace: str) -> list[tuple[ResourceType, dict[str, Any]]]:
        with self.lock:
            return [
                (rt, obj)
                for rt in self._types.values()
                if rt.namespaced
                for key, obj in self._store[rt.storage_key].items()
                if key[0] == namespace
            ]

    def gvr_of(self, rt: ResourceType) -> GVR:
        return (rt.group, rt.versions[0], rt.plural)
