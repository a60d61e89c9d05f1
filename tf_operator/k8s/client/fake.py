"""An in-memory API server behind the ResourceClient interface, for unit tests.

:class:`FakeKubeClient` keeps objects per resource and follows the API
server's rules closely enough for controllers and informers: one global
resourceVersion counter, uid and creationTimestamp on create, generateName,
404 / 409 (AlreadyExists, Conflict on a stale resourceVersion) / 410 errors
with real Status bodies, the status subresource (``update`` keeps the stored
status, ``update_status`` changes only status), label and simple field
selectors, merge / strategic (treated as merge) / JSON patches, finalizers,
paginated lists and watches. Watches replay history after the requested
resourceVersion then stream live events through a queue, so a real informer
can run on it; a watch from a compacted resourceVersion gets a 410 ERROR event
as from a real server.

Like client-go's fake clientset every call is recorded in ``actions`` and
passes through reactors first: ``prepend_reactor(verb, plural, fn)`` with
``fn(action) -> (handled, result_or_exception)`` can answer or fail any call.
"""

from __future__ import annotations

import copy
import itertools
import json
import queue
import random
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import jsonpatch

from tf_operator.k8s import labels as labelsmod
from tf_operator.k8s.client import errors
from tf_operator.k8s.client.resource import Resource

# Resources whose main-resource update leaves status alone (they have a status
# subresource on a real server). CRDs registered in tests can be added.
_NO_STATUS_SUBRESOURCE = {"configmaps", "secrets", "events", "endpoints", "leases"}
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclass
class Action:
    """One recorded call, like client-go's ``testing.Action``."""

    verb: str
    resource_plural: str
    namespace: str | None
    name: str | None = None
    subresource: str | None = None
    body: Any = None
    resource: Resource | None = None
    options: dict = field(default_factory=dict)

    def matches(self, verb: str, plural: str) -> bool:
        return verb in ("*", self.verb) and plural in ("*", self.resource_plural)


Reactor = Callable[[Action], tuple[bool, Any]]


@dataclass
class _Event:
    rv: int
    resource: Resource
    type: str
    obj: dict
    old: dict | None


class FakeWatchStream:
    """Watch events from the fake; iterate for ``(type, obj)``, close from anywhere."""

    _END = object()

    def __init__(self, owner: FakeKubeClient | None = None) -> None:
        self._queue: queue.Queue = queue.Queue()
        self._closed = threading.Event()
        self._owner = owner

    def push(self, event_type: str, obj: dict) -> None:
        if not self._closed.is_set():
            self._queue.put((event_type, obj))

    def end(self) -> None:
        """End the stream from the server side (as a server-side timeout does)."""
        self._queue.put(self._END)

    def fail(self, exc: BaseException) -> None:
        """Break the stream: the reader gets ``exc`` after already-queued events."""
        self._queue.put(exc)

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self._queue.put(self._END)
            if self._owner is not None:
                self._owner._forget_watch(self)

    def __iter__(self) -> Iterator[tuple[str, dict]]:
        while True:
            item = self._queue.get()
            if item is self._END or self._closed.is_set():
                if self._owner is not None:
                    self._owner._forget_watch(self)
                return
            if isinstance(item, BaseException):
                if self._owner is not None:
                    self._owner._forget_watch(self)
                raise item
            yield item

    def __enter__(self) -> FakeWatchStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _Watcher:
    resource: Resource
    namespace: str | None
    label_selector: labelsmod.Selector
    field_selector: str | None
    stream: FakeWatchStream


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _field_value(obj: dict, path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def field_selector_matches(selector: str | None, obj: dict) -> bool:
    """Simple field selectors: ``path=value``, ``path==value``, ``path!=value``, comma ANDed."""
    if not selector:
        return True
    for term in selector.split(","):
        term = term.strip()
        if not term:
            continue
        if "!=" in term:
            path, value = term.split("!=", 1)
            if _field_value(obj, path.strip()) == value.strip():
                return False
            continue
        path, sep, value = term.replace("==", "=").partition("=")
        if not sep:
            raise errors.new_bad_request(f"invalid field selector {selector!r}")
        if _field_value(obj, path.strip()) != value.strip():
            return False
    return True


class FakeKubeClient:
    """An in-memory API with the KubeClient interface."""

    def __init__(
        self,
        objects: dict[Resource, list[dict]] | None = None,
        watch_history: int = 10000,
        status_subresource_plurals: set[str] | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._rv = itertools.count(1)
        self._last_rv = 0
        self._objects: dict[Resource, dict[tuple[str, str], dict]] = {}
        self._history: deque[_Event] = deque(maxlen=watch_history)
        self._oldest_rv = 0  # events with rv <= this are gone from history
        self._watchers: list[_Watcher] = []
        self._continues: dict[str, tuple[list[dict], str]] = {}
        self._reactors: list[tuple[str, str, Reactor]] = []
        self._no_status_sub = set(_NO_STATUS_SUBRESOURCE)
        if status_subresource_plurals is not None:
            self._no_status_sub -= status_subresource_plurals
        self.actions: list[Action] = []
        self._clients: dict[Resource, FakeResourceClient] = {}
        for res, objs in (objects or {}).items():
            for obj in objs:
                self.resource(res).create(obj)
        self.clear_actions()

    # ---- client surface ---------------------------------------------------------
    def resource(self, resource: Resource) -> FakeResourceClient:
        with self._lock:
            rc = self._clients.get(resource)
            if rc is None:
                rc = self._clients[resource] = FakeResourceClient(self, resource)
            return rc

    def clear_actions(self) -> None:
        with self._lock:
            self.actions = []

    def prepend_reactor(self, verb: str, plural: str, fn: Reactor) -> None:
        """Put ``fn`` before every other reactor for ``verb`` on ``plural`` ('*' matches any)."""
        with self._lock:
            self._reactors.insert(0, (verb, plural, fn))

    def add_reactor(self, verb: str, plural: str, fn: Reactor) -> None:
        with self._lock:
            self._reactors.append((verb, plural, fn))

    def filter_actions(self, verb: str = "*", plural: str = "*") -> list[Action]:
        """The recorded actions matching ``verb`` and ``plural`` (list and watch included)."""
        with self._lock:
            return [a for a in self.actions if a.matches(verb, plural)]

    # ---- test controls ----------------------------------------------------------
    def end_watches(self, resource: Resource | None = None) -> int:
        """End every open watch (of ``resource``), as a server-side timeout does."""
        with self._lock:
            targets = [w for w in self._watchers if resource in (None, w.resource)]
            self._watchers = [w for w in self._watchers if w not in targets]
        for w in targets:
            w.stream.end()
        return len(targets)

    def send_watch_error(self, status: dict, resource: Resource | None = None) -> int:
        """Send an ERROR event carrying ``status`` to every open watch, then end them."""
        with self._lock:
            targets = [w for w in self._watchers if resource in (None, w.resource)]
            self._watchers = [w for w in self._watchers if w not in targets]
        for w in targets:
            w.stream.push("ERROR", copy.deepcopy(status))
            w.stream.end()
        return len(targets)

    def break_watches(
        self, exc: BaseException | None = None, resource: Resource | None = None
    ) -> int:
        """Fail every open watch with ``exc`` (a dropped connection by default)."""
        exc = exc or errors.TransportError("connection reset by peer")
        with self._lock:
            targets = [w for w in self._watchers if resource in (None, w.resource)]
            self._watchers = [w for w in self._watchers if w not in targets]
        for w in targets:
            w.stream.fail(exc)
        return len(targets)

    def compact(self) -> None:
        """Forget all watch history: watches from any older resourceVersion get 410."""
        with self._lock:
            self._history.clear()
            self._oldest_rv = self._last_rv

    def watch_count(self, resource: Resource | None = None) -> int:
        with self._lock:
            return sum(1 for w in self._watchers if resource in (None, w.resource))

    @property
    def resource_version(self) -> str:
        with self._lock:
            return str(self._last_rv)

    # ---- internals ----------------------------------------------------------------
    def _forget_watch(self, stream: FakeWatchStream) -> None:
        with self._lock:
            self._watchers = [w for w in self._watchers if w.stream is not stream]

    def _invoke(self, action: Action, default: Callable[[], Any]) -> Any:
        with self._lock:
            self.actions.append(action)
            reactors = [fn for verb, plural, fn in self._reactors if action.matches(verb, plural)]
        for fn in reactors:
            handled, result = fn(action)
            if handled:
                if isinstance(result, BaseException):
                    raise result
                return copy.deepcopy(result)
        return default()

    def _next_rv(self) -> int:
        self._last_rv = next(self._rv)
        return self._last_rv

    def _store(self, resource: Resource) -> dict[tuple[str, str], dict]:
        return self._objects.setdefault(resource, {})

    def _emit(self, resource: Resource, event_type: str, obj: dict, old: dict | None) -> None:
        """Record and fan out one event; called with the lock held, in RV order."""
        event = _Event(int(obj["metadata"]["resourceVersion"]), resource, event_type, obj, old)
        if len(self._history) == self._history.maxlen and self._history:
            self._oldest_rv = self._history[0].rv
        self._history.append(event)
        for w in self._watchers:
            self._deliver(w, event)

    @staticmethod
    def _visible(w: _Watcher, obj: dict | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata", {})
        if w.namespace and meta.get("namespace") != w.namespace:
            return False
        return w.label_selector.matches(meta.get("labels")) and field_selector_matches(
            w.field_selector, obj
        )

    def _deliver(self, w: _Watcher, event: _Event) -> None:
        if w.resource != event.resource:
            return
        now = self._visible(w, event.obj)
        before = self._visible(w, event.old) if event.type == "MODIFIED" else now
        if event.type == "MODIFIED" and now != before:
            # Moving into or out of a watch's selector looks like add/delete to it.
            kind = "ADDED" if now else "DELETED"
            w.stream.push(kind, copy.deepcopy(event.obj))
        elif now:
            w.stream.push(event.type, copy.deepcopy(event.obj))


class FakeResourceClient:
    """The ResourceClient interface over a FakeKubeClient."""

    def __init__(self, fake: FakeKubeClient, resource: Resource) -> None:
        self.fake = fake
        self.resource = resource

    # ---- helpers ------------------------------------------------------------------
    def _action(
        self, verb: str, namespace: str | None, name: str | None = None, **kw: Any
    ) -> Action:
        return Action(
            verb=verb,
            resource_plural=self.resource.plural,
            namespace=namespace,
            name=name,
            subresource=kw.pop("subresource", None),
            body=copy.deepcopy(kw.pop("body", None)),
            resource=self.resource,
            options=kw,
        )

    def _ns(self, namespace: str | None) -> str:
        return (namespace or "") if self.resource.namespaced else ""

    def _not_found(self, name: str) -> errors.ApiError:
        return errors.new_not_found(self.resource.plural, name, self.resource.group)

    def _get_stored(self, namespace: str | None, name: str) -> dict:
        obj = self.fake._store(self.resource).get((self._ns(namespace), name))
        if obj is None:
            raise self._not_found(name)
        return obj

    def _has_status_subresource(self) -> bool:
        return self.resource.plural not in self.fake._no_status_sub

    # ---- reads ----------------------------------------------------------------------
    def get(self, name: str, namespace: str | None = None) -> dict:
        def run() -> dict:
            with self.fake._lock:
                return copy.deepcopy(self._get_stored(namespace, name))

        return self.fake._invoke(self._action("get", namespace, name), run)

    def list(
        self,
        namespace: str | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> dict:
        action = self._action(
            "list",
            namespace,
            label_selector=None if label_selector is None else str(label_selector),
            field_selector=field_selector,
            resource_version=resource_version,
            limit=limit,
            continue_token=continue_token,
        )
        return self.fake._invoke(
            action,
            lambda: self._list(namespace, label_selector, field_selector, limit, continue_token),
        )

    def _list(self, namespace, label_selector, field_selector, limit, continue_token) -> dict:
        fake = self.fake
        with fake._lock:
            if continue_token:
                try:
                    remaining, rv = fake._continues.pop(continue_token)
                except KeyError:
                    raise errors.new_resource_expired(
                        "the provided continue parameter is too old"
                    ) from None
            else:
                selector = labelsmod.parse_selector(
                    None if label_selector is None else str(label_selector)
                )
                ns = self._ns(namespace)
                remaining = [
                    obj
                    for (ons, _), obj in sorted(fake._store(self.resource).items())
                    if (not ns or ons == ns)
                    and selector.matches(obj["metadata"].get("labels"))
                    and field_selector_matches(field_selector and str(field_selector), obj)
                ]
                rv = str(fake._last_rv)
            meta: dict[str, Any] = {"resourceVersion": rv}
            page = remaining
            if limit and len(remaining) > limit:
                page, rest = remaining[:limit], remaining[limit:]
                token = uuid.uuid4().hex
                fake._continues[token] = (rest, rv)
                meta["continue"] = token
                meta["remainingItemCount"] = len(rest)
            return {
                "apiVersion": self.resource.api_version,
                "kind": self.resource.list_kind,
                "metadata": meta,
                "items": copy.deepcopy(page),
            }

    def watch(
        self,
        namespace: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        allow_bookmarks: bool = False,
    ) -> FakeWatchStream:
        action = self._action(
            "watch",
            namespace,
            resource_version=resource_version,
            label_selector=None if label_selector is None else str(label_selector),
            field_selector=field_selector,
            timeout_seconds=timeout_seconds,
        )
        return self.fake._invoke(
            action, lambda: self._watch(namespace, resource_version, label_selector, field_selector)
        )

    def _watch(
        self, namespace, resource_version, label_selector, field_selector
    ) -> FakeWatchStream:
        fake = self.fake
        selector = labelsmod.parse_selector(None if label_selector is None else str(label_selector))
        stream = FakeWatchStream(fake)
        w = _Watcher(
            self.resource,
            self._ns(namespace) or None,
            selector,
            field_selector and str(field_selector),
            stream,
        )
        with fake._lock:
            if resource_version in (None, "", "0"):
                # No position given: synthetic ADDED events for the current state.
                for _key, obj in sorted(fake._store(self.resource).items()):
                    if fake._visible(w, obj):
                        stream.push("ADDED", copy.deepcopy(obj))
            else:
                rv = int(resource_version)
                if rv < fake._oldest_rv:
                    body = errors.status_body(
                        410,
                        errors.REASON_EXPIRED,
                        f"too old resource version: {rv} ({fake._oldest_rv})",
                    )
                    stream.push("ERROR", body)
                    stream.end()
                    return stream
                for event in fake._history:
                    if event.rv > rv:
                        fake._deliver(w, event)
            fake._watchers.append(w)
        return stream

    # ---- writes ----------------------------------------------------------------------
    def create(
        self,
        body: dict,
        namespace: str | None = None,
        subresource: str | None = None,
        name: str | None = None,
    ) -> dict:
        ns = namespace if namespace is not None else (body.get("metadata") or {}).get("namespace")
        action = self._action(
            "create",
            ns,
            name or (body.get("metadata") or {}).get("name"),
            body=body,
            subresource=subresource,
        )
        return self.fake._invoke(action, lambda: self._create(body, ns, subresource, name))

    def _create(self, body: dict, namespace: str | None, subresource, name) -> dict:
        if subresource:
            raise errors.ApiError(
                405,
                errors.REASON_METHOD_NOT_ALLOWED,
                f"the fake does not implement POST {self.resource.plural}/{subresource}",
            )
        fake = self.fake
        obj = copy.deepcopy(body)
        meta = obj.setdefault("metadata", {})
        ns = self._ns(namespace)
        if self.resource.namespaced:
            if meta.get("namespace") and meta["namespace"] != ns:
                raise errors.new_bad_request(
                    "the namespace of the provided object does not match the namespace "
                    "sent on the request"
                )
            if not ns:
                raise errors.new_bad_request("a namespace is required")
            meta["namespace"] = ns
        with fake._lock:
            store = fake._store(self.resource)
            if not meta.get("name"):
                if not meta.get("generateName"):
                    raise errors.new_invalid(
                        self.resource.kind,
                        "",
                        "metadata.name: Required value: name or generateName is required",
                    )
                while True:
                    suffix = "".join(random.choices(_NAME_ALPHABET, k=5))
                    if (ns, meta["generateName"] + suffix) not in store:
                        break
                meta["name"] = meta["generateName"] + suffix
            if (ns, meta["name"]) in store:
                raise errors.new_already_exists(
                    self.resource.plural, meta["name"], self.resource.group
                )
            obj.setdefault("apiVersion", self.resource.api_version)
            obj.setdefault("kind", self.resource.kind)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = _now()
            meta.setdefault("generation", 1)
            meta.pop("deletionTimestamp", None)
            meta["resourceVersion"] = str(fake._next_rv())
            store[(ns, meta["name"])] = obj
            fake._emit(self.resource, "ADDED", copy.deepcopy(obj), None)
            return copy.deepcopy(obj)

    def update(self, body: dict, namespace: str | None = None) -> dict:
        return self._update_verb(body, namespace, None)

    def update_status(self, body: dict, namespace: str | None = None) -> dict:
        return self._update_verb(body, namespace, "status")

    def _update_verb(self, body: dict, namespace: str | None, subresource: str | None) -> dict:
        meta = body.get("metadata") or {}
        ns = namespace if namespace is not None else meta.get("namespace")
        name = meta.get("name")
        if not name:
            raise ValueError("object has no metadata.name")
        action = self._action("update", ns, name, body=body, subresource=subresource)
        return self.fake._invoke(
            action, lambda: self._replace(ns, name, lambda old: copy.deepcopy(body), subresource)
        )

    def patch(
        self,
        name: str,
        body: Any,
        namespace: str | None = None,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> dict:
        if patch_type not in ("merge", "strategic", "json"):
            raise ValueError(f"unknown patch type {patch_type!r}")
        action = self._action(
            "patch", namespace, name, body=body, subresource=subresource, patch_type=patch_type
        )

        def apply(old: dict) -> dict:
            if patch_type == "json":
                try:
                    return jsonpatch.apply_patch(old, body)
                except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                    raise errors.ApiError(
                        422, errors.REASON_INVALID, f"the JSON patch cannot be applied: {exc}"
                    ) from exc
            return merge_patch(old, body)

        return self.fake._invoke(
            action, lambda: self._replace(namespace, name, apply, subresource, patch=True)
        )

    def _replace(
        self,
        namespace: str | None,
        name: str,
        make_new: Callable[[dict], dict],
        subresource: str | None,
        patch: bool = False,
    ) -> dict:
        fake = self.fake
        with fake._lock:
            old = self._get_stored(namespace, name)
            new = make_new(copy.deepcopy(old))
            new_meta = new.setdefault("metadata", {})
            want_rv = new_meta.get("resourceVersion")
            if patch and want_rv == old["metadata"]["resourceVersion"]:
                want_rv = None
            if want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise errors.new_conflict(
                    self.resource.plural,
                    name,
                    "the object has been modified; please apply your changes to the latest "
                    "version and try again",
                    self.resource.group,
                )
            if subresource == "status":
                merged = copy.deepcopy(old)
                if "status" in new:
                    merged["status"] = new["status"]
                else:
                    merged.pop("status", None)
                new = merged
            elif subresource:
                raise errors.ApiError(
                    405,
                    errors.REASON_METHOD_NOT_ALLOWED,
                    f"the fake does not implement {self.resource.plural}/{subresource}",
                )
            else:
                if self._has_status_subresource():
                    if "status" in old:
                        new["status"] = copy.deepcopy(old["status"])
                    else:
                        new.pop("status", None)
                meta = new["metadata"]
                for key in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp"):
                    if key in old["metadata"]:
                        meta[key] = old["metadata"][key]
                    else:
                        meta.pop(key, None)
                if _spec_changed(old, new):
                    meta["generation"] = int(old["metadata"].get("generation", 1)) + 1
                else:
                    meta["generation"] = old["metadata"].get("generation", 1)
            new.setdefault("apiVersion", old.get("apiVersion"))
            new.setdefault("kind", old.get("kind"))
            store = fake._store(self.resource)
            key = (self._ns(namespace), name)
            deleting = new["metadata"].get("deletionTimestamp")
            if deleting and not new["metadata"].get("finalizers"):
                # The last finalizer went: the object goes with it.
                new["metadata"]["resourceVersion"] = str(fake._next_rv())
                del store[key]
                fake._emit(self.resource, "DELETED", copy.deepcopy(new), old)
                return copy.deepcopy(new)
            if _same(old, new):
                return copy.deepcopy(old)  # no-op writes keep the resourceVersion
            new["metadata"]["resourceVersion"] = str(fake._next_rv())
            store[key] = new
            fake._emit(self.resource, "MODIFIED", copy.deepcopy(new), old)
            return copy.deepcopy(new)

    def delete(
        self,
        name: str,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions_uid: str | None = None,
    ) -> dict:
        action = self._action(
            "delete",
            namespace,
            name,
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            preconditions_uid=preconditions_uid,
        )
        return self.fake._invoke(action, lambda: self._delete(namespace, name, preconditions_uid))

    def _delete(self, namespace: str | None, name: str, preconditions_uid: str | None) -> dict:
        fake = self.fake
        with fake._lock:
            old = self._get_stored(namespace, name)
            if preconditions_uid and old["metadata"].get("uid") != preconditions_uid:
                raise errors.new_conflict(
                    self.resource.plural,
                    name,
                    f"Precondition failed: UID in precondition: {preconditions_uid}, "
                    f"UID in object meta: {old['metadata'].get('uid')}",
                    self.resource.group,
                )
            key = (self._ns(namespace), name)
            store = fake._store(self.resource)
            if old["metadata"].get("finalizers"):
                if old["metadata"].get("deletionTimestamp"):
                    return copy.deepcopy(old)
                new = copy.deepcopy(old)
                new["metadata"]["deletionTimestamp"] = _now()
                new["metadata"]["deletionGracePeriodSeconds"] = 0
                new["metadata"]["resourceVersion"] = str(fake._next_rv())
                store[key] = new
                fake._emit(self.resource, "MODIFIED", copy.deepcopy(new), old)
                return copy.deepcopy(new)
            gone = copy.deepcopy(old)
            gone["metadata"]["resourceVersion"] = str(fake._next_rv())
            del store[key]
            fake._emit(self.resource, "DELETED", copy.deepcopy(gone), old)
            return gone


def _same(old: dict, new: dict) -> bool:
    strip = ("resourceVersion",)
    a = {**old, "metadata": {k: v for k, v in old["metadata"].items() if k not in strip}}
    b = {**new, "metadata": {k: v for k, v in new["metadata"].items() if k not in strip}}
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _spec_changed(old: dict, new: dict) -> bool:
    return json.dumps(old.get("spec"), sort_keys=True) != json.dumps(
        new.get("spec"), sort_keys=True
    )
