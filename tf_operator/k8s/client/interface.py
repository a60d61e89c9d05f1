"""The client surface the rest of the operator programs against, as ``typing.Protocol`` s.

Like client-go's ``kubernetes.Interface``: :class:`KubeInterface` hands out one
:class:`ResourceInterface` per resource. :class:`~tf_operator.k8s.client.kube.KubeClient` and
:class:`~tf_operator.k8s.client.rest.ResourceClient` implement them over HTTP; a test double
implements them structurally (none ships in this package).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from tf_operator.k8s.client.resource import Resource
from tf_operator.k8s.objects import Obj


class WatchInterface(Protocol):
    """A watch: iterate for ``(event type, object)``; ``close`` from any thread ends it."""

    def __iter__(self) -> Iterator[tuple[str, Obj]]: ...

    def close(self) -> None: ...


class ResourceInterface(Protocol):
    """CRUD, list and watch of one resource (see ``ResourceClient`` for the semantics)."""

    def list(
        self,
        namespace: str | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> Obj: ...

    def watch(
        self,
        namespace: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        allow_bookmarks: bool = False,
    ) -> WatchInterface: ...

    def get(self, name: str, namespace: str | None = None) -> Obj: ...

    def create(
        self,
        body: Obj,
        namespace: str | None = None,
        subresource: str | None = None,
        name: str | None = None,
    ) -> Obj: ...

    def update(self, body: Obj, namespace: str | None = None) -> Obj: ...

    def update_status(self, body: Obj, namespace: str | None = None) -> Obj: ...

    def patch(
        self,
        name: str,
        body: Any,
        namespace: str | None = None,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> Obj: ...

    def delete(
        self,
        name: str,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions_uid: str | None = None,
    ) -> Obj: ...


class KubeInterface(Protocol):
    """One API connection: ``resource(r)`` is the client of resource ``r``."""

    def resource(self, resource: Resource) -> ResourceInterface: ...
