"""``ClusterClient``: the one narrow interface every local-cluster agent talks to the API through.

What client-go's ``kubernetes.Interface`` is to its fakes: the kubelets, schedulers and
controllers know this Protocol and nothing of the server behind it. Two implementations, chosen
once at start-up by the assembly (``LocalCluster``): ``InProcessClient`` over the emulator's
``Registry`` (no HTTP, no copies on the ``shared`` paths) and ``HttpClient`` over HTTP(S) to any
API server (the emulator's own listener or a real kube-apiserver).

The contract, identical for both:

- Objects are plain JSON dicts. A result is the caller's own copy unless the caller passed
  ``shared=True``, promising never to mutate it; a backend may then hand out an object it keeps
  (the emulator's stored dict). Bodies passed in are never mutated.
- Every failure the API reports is a ``StatusError`` (``localcluster.apimachinery.errors``)
  with the HTTP ``code`` and the ``Status`` ``reason``: 404 ``NotFound``, 409 ``Conflict`` or
  ``AlreadyExists``, 410 ``Expired``, 422 ``Invalid``... An API server that cannot be reached
  is a 503 ``ServiceUnavailable``, so an agent retries it as it retries any 503.
- ``watch`` starts after ``resource_version`` (from the beginning, as synthetic ADDED events,
  when it is None or "0") and yields ``ADDED``/``MODIFIED``/``DELETED``; a resourceVersion older
  than the server's history is a 410, raised at once or delivered as one ``ERROR`` event,
  after which the caller relists (``informer``). Bookmarks never reach the caller.

Resources are named by ``GVR`` (group, version, plural); ``namespace`` is None for
cluster-scoped ones.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, Protocol

from localcluster.apimachinery.gvr import GVR

# The patch bodies an agent may send: RFC 7386 merge, RFC 6902 JSON patch, strategic merge.
PatchType = Literal["merge", "json", "strategic"]

Object = dict[str, Any]


class Page(NamedTuple):
    """One page of a LIST: the items, the list's resourceVersion (watch from it) and the
    continue token of the next page (None on the last)."""

    items: list[Object]
    resource_version: str
    continue_token: str | None


class ResourceInfo(NamedTuple):
    """What discovery says about one served resource."""

    namespaced: bool
    subresources: frozenset[str]  # e.g. {"status", "scale"}


class WatchStream(Protocol):
    """The events of one watch, consumed by one thread.

    In process, every event committed before a call is already queued when it returns (the
    emulator queues while committing), so draining the stream is a barrier
    (``Informer.sync``); over HTTP the stream holds what has arrived.
    """

    @property
    def closed(self) -> bool:
        """No more events will be queued (stopped, expired, or failed)."""
        ...

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` until an event is queued or the stream closed, consuming
        nothing; True when either holds."""
        ...

    def pending(self) -> int:
        """How many events are queued."""
        ...

    def get_shared(self, timeout: float) -> tuple[str, Object] | None:
        """The next ``(type, object)``; None on timeout or once closed and drained. The object
        may be shared with other watchers: never mutate it."""
        ...

    def close(self, reason: str) -> None:
        """Mark the stream closed (the consumer gave up on it)."""
        ...

    def stop(self) -> None:
        """Close the stream and release what it holds (a connection, a server-side watch)."""
        ...


class ClusterClient(Protocol):
    """The API as the local cluster's agents use it (see the module docstring)."""

    def get(self, gvr: GVR, namespace: str | None, name: str, *, shared: bool = False) -> Object:
        """One object; 404 when absent."""
        ...

    def list(
        self,
        gvr: GVR,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        shared: bool = False,
    ) -> Page:
        """One page of a LIST (every item when ``limit`` is None); a ``continue_token`` reads
        the next page of the same list."""
        ...

    def watch(
        self,
        gvr: GVR,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> WatchStream:
        """Changes after ``resource_version`` (see the module docstring)."""
        ...

    def create(
        self, gvr: GVR, namespace: str | None, obj: Object, *, shared: bool = False
    ) -> Object:
        """The stored object; 409 ``AlreadyExists`` for a taken name."""
        ...

    def update(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        obj: Object,
        *,
        subresource: str | None = None,
        shared: bool = False,
    ) -> Object:
        """Replace the object (or its ``status`` subresource); 409 ``Conflict`` when
        ``metadata.resourceVersion`` is stale."""
        ...

    def patch(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: PatchType,
        *,
        subresource: str | None = None,
        shared: bool = False,
    ) -> Object:
        """The object after the patch."""
        ...

    def delete(
        self,
        gvr: GVR,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
        preconditions: dict[str, str] | None = None,
    ) -> None:
        """Delete (or start the graceful deletion of) an object. ``preconditions`` holds
        ``uid`` and/or ``resourceVersion``: 409 when the object no longer has them."""
        ...

    def bind(self, namespace: str, name: str, node_name: str, *, shared: bool = False) -> Object:
        """POST ``pods/{name}/binding``: assign the pod to ``node_name``; the pod as bound.
        409 when it is bound already or being deleted."""
        ...

    def create_token(self, namespace: str, service_account: str, token_request: Object) -> Object:
        """POST ``serviceaccounts/{name}/token``: the answered ``TokenRequest``."""
        ...

    def resource_info(self, gvr: GVR) -> ResourceInfo:
        """Discovery of one resource; 404 when it is not served (a CRD not installed yet)."""
        ...
