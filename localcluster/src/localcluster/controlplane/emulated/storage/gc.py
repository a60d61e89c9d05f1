"""Garbage collection by ownerReferences, namespace cleanup, in a background thread.

The registry calls ``observe`` for every committed event (with its lock held); ``observe`` only
decides, in O(1), whether the event needs work and queues it. The collector reads the store's
uid and owner indexes through the ``Index`` protocol and writes through the registry's
``Writes`` protocol below, so this module imports neither ``store`` nor ``registry`` (the import
graph stays acyclic: registry -> gc, registry -> store). The worker thread then acts like the
real garbage collector: dependents whose owners are all gone are deleted in the background;
owners carrying ``foregroundDeletion`` wait until dependents with ``blockOwnerDeletion`` are gone;
owners carrying ``orphan`` have their reference removed from every dependent first. Terminating
namespaces are emptied and then removed.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, Protocol

from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.objects import meta
from localcluster.controlplane.emulated.resources import ResourceType
from localcluster.controlplane.emulated.storage.watch import Event

log = logging.getLogger(__name__)

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"


class Index(Protocol):
    """What the collector reads (the store; thread-safe, callable with its lock held)."""

    def uid_exists(self, uid: str) -> bool: ...

    def has_dependents(self, uid: str) -> bool: ...

    def lookup_uid(self, uid: str) -> tuple[ResourceType, dict[str, Any]] | None: ...

    def dependents_of(self, uid: str) -> list[tuple[ResourceType, dict[str, Any]]]: ...

    def objects_in_namespace(self, namespace: str) -> list[tuple[ResourceType, dict[str, Any]]]: ...

    def namespace_terminating(self, namespace: str) -> bool: ...


class Writes(Protocol):
    """How the collector changes objects (the registry, with the API's semantics)."""

    def finish_namespace(self, name: str) -> bool: ...

    def delete_dependent(
        self, rt: ResourceType, namespace: str | None, name: str, policy: str
    ) -> None:
        """Delete ``name`` with ``policy`` as the collector does (404 and 409 raise)."""

    def set_owner_references(self, rt: ResourceType, obj: dict[str, Any], refs: list[Any]) -> None:
        """Replace the ownerReferences of ``obj`` if it is still the stored object."""

    def remove_finalizer(self, rt: ResourceType, uid: str, finalizer: str) -> None:
        """Drop ``finalizer`` from the object with ``uid`` (a no-op when it is gone)."""


class GarbageCollector:
    """Background worker; ``wait_idle`` lets tests wait until queued work is done."""

    def __init__(self, index: Index, registry: Writes) -> None:
        self._index = index
        self._registry = registry
        self._queue: queue.Queue[tuple[Any, ...] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._busy = 0
        self._idle = threading.Condition()
        self._pending: set[tuple[Any, ...]] = set()

    def start(self) -> None:
        """Start the worker (a no-op while it runs)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(target=self._run, name="apiserver-gc", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=5)
            self._thread = None

    def enqueue(self, item: tuple[Any, ...]) -> None:
        """Queue work unless the same item is already waiting (keeps cascades linear)."""
        with self._idle:
            if item in self._pending:
                return
            self._pending.add(item)
            self._busy += 1
        self._queue.put(item)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    # -- called by the registry with its lock held ---------------------------------------------
    def observe(self, rt: ResourceType, ev: Event) -> None:
        idx = self._index
        m = meta(ev.obj)
        uid = m.get("uid", "")
        if ev.type == "DELETED":
            if uid and idx.has_dependents(uid):
                self.enqueue(("owner_gone", uid))
            for ref in m.get("ownerReferences") or []:
                found = idx.lookup_uid(ref.get("uid", "")) if isinstance(ref, dict) else None
                if found and FOREGROUND in (meta(found[1]).get("finalizers") or []):
                    self.enqueue(("foreground", ref["uid"]))
            ns = ev.namespace
            if ns and rt.namespaced and idx.namespace_terminating(ns):
                self.enqueue(("namespace", ns))
            return
        if m.get("deletionTimestamp"):
            finalizers = m.get("finalizers") or []
            if FOREGROUND in finalizers:
                self.enqueue(("foreground", uid))
            if ORPHAN in finalizers:
                self.enqueue(("orphan", uid))
        for ref in m.get("ownerReferences") or []:
            if isinstance(ref, dict) and ref.get("uid") and not idx.uid_exists(ref["uid"]):
                self.enqueue(("owner_gone", ref["uid"]))

    # -- worker ---------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            with self._idle:
                self._pending.discard(item)
            try:
                self._handlers[item[0]](*item[1:])
            except Exception:  # the collector must survive anything one object does
                log.exception("garbage collector failed on %s", item)
            finally:
                with self._idle:
                    self._busy -= 1
                    if self._busy == 0:
                        self._idle.notify_all()

    @property
    def _handlers(self) -> dict[str, Callable[[str], None]]:
        """Work item kind -> what the worker does with it (items are ``(kind, uid or name)``)."""
        return {
            "owner_gone": self._owner_gone,
            "foreground": self._foreground,
            "orphan": self._orphan,
            "namespace": self._namespace,
        }

    def _owner_gone(self, uid: str) -> None:
        idx, reg = self._index, self._registry
        if idx.uid_exists(uid):
            return
        for rt, obj in idx.dependents_of(uid):
            refs = meta(obj).get("ownerReferences") or []
            alive = [r for r in refs if idx.uid_exists(r.get("uid", "")) and r.get("uid") != uid]
            m = meta(obj)
            try:
                if alive:
                    self._set_owner_refs(rt, obj, alive)
                elif not m.get("deletionTimestamp"):
                    log.debug(
                        "gc: deleting %s %s/%s (owner %s gone)",
                        rt.kind,
                        m.get("namespace"),
                        m.get("name"),
                        uid,
                    )
                    reg.delete_dependent(rt, m.get("namespace"), m["name"], "Background")
            except StatusError as e:
                if e.code not in (404, 409):
                    raise

    def _foreground(self, uid: str) -> None:
        idx, reg = self._index, self._registry
        found = idx.lookup_uid(uid)
        if found is None:
            return
        rt, owner = found
        if FOREGROUND not in (meta(owner).get("finalizers") or []):
            return
        for dep_rt, dep in idx.dependents_of(uid):
            m = meta(dep)
            if m.get("deletionTimestamp"):
                continue
            policy = "Foreground" if idx.has_dependents(m.get("uid", "")) else "Background"
            try:
                reg.delete_dependent(dep_rt, m.get("namespace"), m["name"], policy)
            except StatusError as e:
                if e.code != 404:
                    raise
        if not any(_blocks(d, uid) for _, d in idx.dependents_of(uid)):
            self._drop_finalizer(rt, uid, FOREGROUND)

    def _orphan(self, uid: str) -> None:
        idx = self._index
        found = idx.lookup_uid(uid)
        if found is None:
            return
        rt, _ = found
        for dep_rt, dep in idx.dependents_of(uid):
            refs = [r for r in meta(dep).get("ownerReferences") or [] if r.get("uid") != uid]
            try:
                self._set_owner_refs(dep_rt, dep, refs)
            except StatusError as e:
                if e.code != 404:
                    raise
        self._drop_finalizer(rt, uid, ORPHAN)

    def _namespace(self, name: str) -> None:
        idx, reg = self._index, self._registry
        if reg.finish_namespace(name):
            return
        for rt, obj in idx.objects_in_namespace(name):
            m = meta(obj)
            if m.get("deletionTimestamp"):
                continue
            try:
                reg.delete_dependent(rt, name, m["name"], "Background")
            except StatusError as e:
                if e.code != 404:
                    raise
        reg.finish_namespace(name)

    def _set_owner_refs(self, rt: ResourceType, obj: dict[str, Any], refs: list[Any]) -> None:
        self._registry.set_owner_references(rt, obj, refs)

    def _drop_finalizer(self, rt: ResourceType, uid: str, finalizer: str) -> None:
        self._registry.remove_finalizer(rt, uid, finalizer)


def _blocks(dependent: dict[str, Any], owner_uid: str) -> bool:
    return any(
        r.get("uid") == owner_uid and r.get("blockOwnerDeletion")
        for r in meta(dependent).get("ownerReferences") or []
    )
