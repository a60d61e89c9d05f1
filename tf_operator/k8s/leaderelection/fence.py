"""A client whose writes go out only while the leader's lease is held: the write fence.

A leader reconciles through a :class:`FencedClient` wrapped around its client. Every write
(create, update, update_status, patch, delete) first asks ``holds_lease``, and runs in a
request scope (:mod:`tf_operator.k8s.client.scope`) carrying the same question as its fence,
which the transport asks again before each attempt: a write that waited out a Retry-After
while the lease ran out is not sent afterwards. Reads and watches pass through untouched, and
the lock's own writes use the unwrapped client. Together with the elector ending a term when
its time is up (whatever the renewing thread is doing), nothing this process writes after its
lease could have passed to another elector reaches the server, short of a request already on
the wire (divergence D66).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tf_operator.k8s.client import KubeInterface, Resource, ResourceInterface, WatchInterface
from tf_operator.k8s.client.scope import WriteFenced, request_scope
from tf_operator.k8s.objects import Obj


class FencedResource:
    """One resource's client with fenced writes."""

    def __init__(self, inner: ResourceInterface, holds_lease: Callable[[], bool]) -> None:
        self._inner = inner
        self._holds_lease = holds_lease

    def _write(self, what: str, call: Callable[[], Obj]) -> Obj:
        if not self._holds_lease():
            raise WriteFenced(f"{what}: refused, the leader election lease is not held")
        with request_scope(fence=self._holds_lease):
            return call()

    def list(
        self,
        namespace: str | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> Obj:
        return self._inner.list(
            namespace, label_selector, field_selector, resource_version, limit, continue_token
        )

    def watch(
        self,
        namespace: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        allow_bookmarks: bool = False,
    ) -> WatchInterface:
        return self._inner.watch(
            namespace,
            resource_version,
            timeout_seconds,
            label_selector,
            field_selector,
            allow_bookmarks,
        )

    def get(self, name: str, namespace: str | None = None) -> Obj:
        return self._inner.get(name, namespace)

    def create(
        self,
        body: Obj,
        namespace: str | None = None,
        subresource: str | None = None,
        name: str | None = None,
    ) -> Obj:
        return self._write("create", lambda: self._inner.create(body, namespace, subresource, name))

    def update(self, body: Obj, namespace: str | None = None) -> Obj:
        return self._write("update", lambda: self._inner.update(body, namespace))

    def update_status(self, body: Obj, namespace: str | None = None) -> Obj:
        return self._write("update status", lambda: self._inner.update_status(body, namespace))

    def patch(
        self,
        name: str,
        body: Any,
        namespace: str | None = None,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> Obj:
        return self._write(
            "patch", lambda: self._inner.patch(name, body, namespace, patch_type, subresource)
        )

    def delete(
        self,
        name: str,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions_uid: str | None = None,
    ) -> Obj:
        return self._write(
            "delete",
            lambda: self._inner.delete(
                name, namespace, propagation_policy, grace_period_seconds, preconditions_uid
            ),
        )


class FencedClient:
    """A :class:`KubeInterface` handing out :class:`FencedResource` s."""

    def __init__(self, inner: KubeInterface, holds_lease: Callable[[], bool]) -> None:
        self._inner = inner
        self._holds_lease = holds_lease
        self._resources: dict[Resource, FencedResource] = {}

    def resource(self, resource: Resource) -> ResourceInterface:
        fenced = self._resources.get(resource)
        if fenced is None:
            fenced = FencedResource(self._inner.resource(resource), self._holds_lease)
            self._resources[resource] = fenced  # a race only builds an equal one twice
        return fenced
