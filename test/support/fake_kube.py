"""A fake Kubernetes client for unit tests, in the style of client-go's fake clientset.

:class:`FakeKubeClient` implements the operator's client interface
(``tf_operator.k8s.client.KubeInterface``) in process. Like client-go's fake it records every
call as an :class:`Action` and offers each call to the reactors first (``prepend_reactor(verb,
plural, fn)`` with ``fn(action) -> (handled, result_or_exception)``), so a test can answer or
fail any request and then compare the exact list of actions a controller made.

Unhandled calls go to the local cluster's in-process ``Registry``, the project's one
implementation of the API's semantics (resourceVersions, 404/409/410, status subresources,
selectors, paging, patches, finalizers, watches); nothing here re-implements them. As in
client-go's fake, no controller runs behind it: the registry's garbage collector (a
kube-controller-manager loop, which would delete objects whose owner a test never created) is
stopped. Two conveniences differ from a real server: every namespace exists, and a custom
resource the registry does not know is served on first use by a permissive CRD with a status
subresource (so a test can put objects into the cache that a real schema would refuse).

Test controls: ``end_watches`` (a server-side timeout), ``send_watch_error`` (an ``ERROR``
event, then the end), ``break_watches`` (a dropped connection), ``compact`` (history gone:
old resourceVersions get 410) and ``watch_count``.
"""

from __future__ import annotations

import copy
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from localcluster.controlplane.emulated import Registry, StatusError
from tf_operator.k8s.client import Resource, TransportError, from_status
from tf_operator.k8s.objects import Obj

CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
NAMESPACES = ("", "v1", "namespaces")


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
    options: dict[str, Any] = field(default_factory=dict)

    def matches(self, verb: str, plural: str) -> bool:
        return verb in ("*", self.verb) and plural in ("*", self.resource_plural)


Reactor = Callable[[Action], tuple[bool, Any]]


def _api_error(err: StatusError) -> Exception:
    return from_status(err.status, err.code)


class FakeWatch:
    """A registry watch as the client's watch interface, with the test controls' endings."""

    def __init__(self, watch: Any, resource: Resource, owner: FakeKubeClient) -> None:
        self._watch = watch
        self.resource = resource
        self._owner = owner
        self._closed = threading.Event()
        self._final: list[tuple[str, Obj]] = []  # events after the queued ones (ERROR)
        self._failure: BaseException | None = None

    @classmethod
    def expired(cls, status: Obj, resource: Resource, owner: FakeKubeClient) -> FakeWatch:
        """A watch that only carries a 410 ``ERROR`` event, as a real server answers."""
        stream = cls(None, resource, owner)
        stream._final.append(("ERROR", status))
        return stream

    def _end(self, final: list[tuple[str, Obj]], failure: BaseException | None = None) -> None:
        self._final, self._failure = final, failure
        if self._watch is not None:
            self._watch.stop()

    def close(self) -> None:
        self._closed.set()
        if self._watch is not None:
            self._watch.stop()
        self._owner._forget(self)

    def __iter__(self) -> Iterator[tuple[str, Obj]]:
        try:
            while self._watch is not None and not self._closed.is_set():
                item = self._watch.get(1.0)
                if item is not None:
                    yield item
                elif self._watch.closed and not self._watch.pending():
                    break
            if self._closed.is_set():
                return
            yield from self._final
            if self._failure is not None:
                raise self._failure
        finally:
            self._owner._forget(self)

    def __enter__(self) -> FakeWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FakeKubeClient:
    """Recorded actions and reactors in front of an in-process registry (see module doc)."""

    def __init__(self, objects: dict[Resource, list[Obj]] | None = None) -> None:
        self.registry = Registry()
        self.registry.gc.stop()
        self._lock = threading.RLock()
        self.actions: list[Action] = []
        self._reactors: list[tuple[str, str, Reactor]] = []
        self._watches: list[FakeWatch] = []
        self._clients: dict[Resource, FakeResourceClient] = {}
        for resource, items in (objects or {}).items():
            for obj in items:
                self.resource(resource).create(obj)
        self.clear_actions()

    # ---- the client interface and the recording ---------------------------------------------

    def resource(self, resource: Resource) -> FakeResourceClient:
        with self._lock:
            client = self._clients.get(resource)
            if client is None:
                self._serve(resource)
                client = self._clients[resource] = FakeResourceClient(self, resource)
            return client

    def clear_actions(self) -> None:
        with self._lock:
            self.actions = []

    def filter_actions(self, verb: str = "*", plural: str = "*") -> list[Action]:
        with self._lock:
            return [a for a in self.actions if a.matches(verb, plural)]

    def prepend_reactor(self, verb: str, plural: str, fn: Reactor) -> None:
        """Put ``fn`` before every other reactor for ``verb`` on ``plural`` ('*' matches any)."""
        with self._lock:
            self._reactors.insert(0, (verb, plural, fn))

    def add_reactor(self, verb: str, plural: str, fn: Reactor) -> None:
        with self._lock:
            self._reactors.append((verb, plural, fn))

    def invoke(self, action: Action, default: Callable[[], Any]) -> Any:
        """Record ``action``; the first reactor that handles it answers, else the registry."""
        with self._lock:
            self.actions.append(action)
            reactors = [fn for verb, plural, fn in self._reactors if action.matches(verb, plural)]
        for fn in reactors:
            handled, result = fn(action)
            if handled:
                if isinstance(result, BaseException):
                    raise result
                return copy.deepcopy(result)
        try:
            return default()
        except StatusError as err:
            raise _api_error(err) from None

    # ---- test controls ----------------------------------------------------------------------

    def _select(self, resource: Resource | None) -> list[FakeWatch]:
        with self._lock:
            chosen = [w for w in self._watches if resource in (None, w.resource)]
            self._watches = [w for w in self._watches if w not in chosen]
        return chosen

    def end_watches(self, resource: Resource | None = None) -> int:
        """End every open watch (of ``resource``), as a server-side timeout does."""
        chosen = self._select(resource)
        for w in chosen:
            w._end([])
        return len(chosen)

    def send_watch_error(self, status: Obj, resource: Resource | None = None) -> int:
        """Send an ERROR event carrying ``status`` to every open watch, then end them."""
        chosen = self._select(resource)
        for w in chosen:
            w._end([("ERROR", copy.deepcopy(status))])
        return len(chosen)

    def break_watches(
        self, exc: BaseException | None = None, resource: Resource | None = None
    ) -> int:
        """Fail every open watch with ``exc`` (a dropped connection by default)."""
        chosen = self._select(resource)
        for w in chosen:
            w._end([], exc or TransportError("connection reset by peer"))
        return len(chosen)

    def compact(self) -> None:
        """Forget all watch history: watches from any older resourceVersion get 410."""
        self.registry.compact()

    def watch_count(self, resource: Resource | None = None) -> int:
        with self._lock:
            return sum(1 for w in self._watches if resource in (None, w.resource))

    @property
    def resource_version(self) -> str:
        return str(self.registry.resource_version)

    # ---- internals --------------------------------------------------------------------------

    def _track(self, watch: FakeWatch) -> FakeWatch:
        with self._lock:
            self._watches.append(watch)
        return watch

    def _forget(self, watch: FakeWatch) -> None:
        with self._lock:
            if watch in self._watches:
                self._watches.remove(watch)

    def ensure_namespace(self, namespace: str | None) -> None:
        if not namespace:
            return
        try:
            self.registry.get(NAMESPACES, None, namespace)
        except StatusError:
            self.registry.create(NAMESPACES, None, {"metadata": {"name": namespace}})

    def _serve(self, resource: Resource) -> None:
        """Register a permissive CRD for a custom resource the registry does not serve."""
        gvr = (resource.group, resource.version, resource.plural)
        try:
            self.registry.resolve(gvr)
            return
        except StatusError:
            pass
        version = {
            "name": resource.version,
            "served": True,
            "storage": True,
            "subresources": {"status": {}},
            "schema": {
                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            },
        }
        crd = {
            "metadata": {
                "name": f"{resource.plural}.{resource.group}",
                # kube-batch's group is a protected one (*.k8s.io)
                "annotations": {"api-approved.kubernetes.io": "unapproved, a test's resource"},
            },
            "spec": {
                "group": resource.group,
                "names": {"plural": resource.plural, "kind": resource.kind},
                "scope": "Namespaced" if resource.namespaced else "Cluster",
                "versions": [version],
            },
        }
        self.registry.create(CRDS, None, crd)


class FakeResourceClient:
    """The ``ResourceInterface`` of one resource over a :class:`FakeKubeClient`."""

    def __init__(self, fake: FakeKubeClient, resource: Resource) -> None:
        self.fake = fake
        self.resource = resource
        self._gvr = (resource.group, resource.version, resource.plural)

    def _action(
        self, verb: str, namespace: str | None, name: str | None = None, **kw: Any
    ) -> Action:
        return Action(
            verb,
            self.resource.plural,
            namespace,
            name,
            kw.pop("subresource", None),
            copy.deepcopy(kw.pop("body", None)),
            self.resource,
            kw,
        )

    def _ns(self, namespace: str | None) -> str | None:
        return namespace if self.resource.namespaced else None

    def get(self, name: str, namespace: str | None = None) -> Obj:
        action = self._action("get", namespace, name)
        return self.fake.invoke(
            action, lambda: self.fake.registry.get(self._gvr, self._ns(namespace), name)
        )

    def list(
        self,
        namespace: str | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> Obj:
        labels = None if label_selector is None else str(label_selector) or None
        fields = None if field_selector is None else str(field_selector) or None
        action = self._action(
            "list",
            namespace,
            label_selector=labels,
            field_selector=fields,
            resource_version=resource_version,
            limit=limit,
            continue_token=continue_token,
        )

        def run() -> Obj:
            items, rv, token, remaining = self.fake.registry.list_page(
                self._gvr, self._ns(namespace), labels, fields, limit, continue_token
            )
            metadata: dict[str, Any] = {"resourceVersion": rv}
            if token:
                metadata["continue"] = token
                metadata["remainingItemCount"] = remaining
            return {
                "apiVersion": self.resource.api_version,
                "kind": self.resource.list_kind,
                "metadata": metadata,
                "items": copy.deepcopy(items),
            }

        return self.fake.invoke(action, run)

    def watch(
        self,
        namespace: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        allow_bookmarks: bool = False,
    ) -> FakeWatch:
        labels = None if label_selector is None else str(label_selector) or None
        fields = None if field_selector is None else str(field_selector) or None
        action = self._action(
            "watch",
            namespace,
            resource_version=resource_version,
            label_selector=labels,
            field_selector=fields,
            timeout_seconds=timeout_seconds,
        )

        def run() -> FakeWatch:
            try:
                watch = self.fake.registry.watch(
                    self._gvr, self._ns(namespace), resource_version, labels, fields
                )
            except StatusError as err:
                if err.code != 410:
                    raise
                return FakeWatch.expired(err.status, self.resource, self.fake)
            return self.fake._track(FakeWatch(watch, self.resource, self.fake))

        return self.fake.invoke(action, run)

    def create(
        self,
        body: Obj,
        namespace: str | None = None,
        subresource: str | None = None,
        name: str | None = None,
    ) -> Obj:
        ns = namespace if namespace is not None else (body.get("metadata") or {}).get("namespace")
        action = self._action(
            "create",
            ns,
            name or (body.get("metadata") or {}).get("name"),
            body=body,
            subresource=subresource,
        )

        def run() -> Obj:
            if self.resource.namespaced:
                self.fake.ensure_namespace(ns)
            if subresource == "binding":
                return self.fake.registry.bind_pod(ns or "", name or "", body["target"]["name"])
            return self.fake.registry.create(self._gvr, self._ns(ns), body)

        return self.fake.invoke(action, run)

    def update(self, body: Obj, namespace: str | None = None) -> Obj:
        return self._update(body, namespace, None)

    def update_status(self, body: Obj, namespace: str | None = None) -> Obj:
        return self._update(body, namespace, "status")

    def _update(self, body: Obj, namespace: str | None, subresource: str | None) -> Obj:
        meta = body.get("metadata") or {}
        ns = namespace if namespace is not None else meta.get("namespace")
        name = meta.get("name")
        if not name:
            raise ValueError("object has no metadata.name")
        action = self._action("update", ns, name, body=body, subresource=subresource)
        return self.fake.invoke(
            action,
            lambda: self.fake.registry.update(self._gvr, self._ns(ns), name, body, subresource),
        )

    def patch(
        self,
        name: str,
        body: Any,
        namespace: str | None = None,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> Obj:
        action = self._action(
            "patch", namespace, name, body=body, subresource=subresource, patch_type=patch_type
        )
        return self.fake.invoke(
            action,
            lambda: self.fake.registry.patch(
                self._gvr, self._ns(namespace), name, body, patch_type, subresource
            ),
        )

    def delete(
        self,
        name: str,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions_uid: str | None = None,
    ) -> Obj:
        action = self._action(
            "delete",
            namespace,
            name,
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            preconditions_uid=preconditions_uid,
        )
        preconditions = {"uid": preconditions_uid} if preconditions_uid else None
        return self.fake.invoke(
            action,
            lambda: self.fake.registry.delete(
                self._gvr,
                self._ns(namespace),
                name,
                grace_period_seconds,
                propagation_policy,
                preconditions,
            ),
        )


class ScriptedWatch:
    """A watch whose events a test pushes by hand (for ListerWatchers written in a test)."""

    _END = object()

    def __init__(self) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._closed = threading.Event()

    def push(self, event_type: str, obj: Obj) -> None:
        self._queue.put((event_type, obj))

    def end(self) -> None:
        """End the stream from the server side."""
        self._queue.put(self._END)

    def close(self) -> None:
        self._closed.set()
        self._queue.put(self._END)

    def __iter__(self) -> Iterator[tuple[str, Obj]]:
        while True:
            item = self._queue.get()
            if item is self._END or self._closed.is_set():
                return
            yield item
