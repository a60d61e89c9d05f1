"""REST access to one API resource, with objects as plain JSON dicts.

:class:`RestTransport` turns requests into JSON over the lean HTTP layer of
:mod:`.transport` (kept-alive connections, headers and TLS prepared once); bodies are
encoded and decoded with orjson. :class:`ResourceClient` is the typed-resource surface (list,
watch, get, create, update, update_status, patch, delete) that controllers, informers and
the fake client share.

Like client-go's ``Request.Do``, a plain request answered 429 or 5xx *with* a
``Retry-After`` header is sent again after that many seconds, up to
``MAX_RETRY_AFTER_ATTEMPTS`` attempts in all: the server said it did not act and
when to come back, so the caller never sees the error. Watches are not retried
here (their reflector backs off and rewatches), nor are answers without the header.

Every request is bounded as newer client-go bounds it by its context (divergence D65): one
wait is at most ``MAX_RETRY_AFTER_WAIT`` seconds, whatever the server asks; the whole request,
its waits included, ends by the deadline of the caller's :func:`~.scope.request_scope` or
``request_timeout`` after it began, whichever is earlier (a wait that would outlast it is not
begun: the server's answer goes to the caller at once); the scope's cancel event ends a wait,
and its fence is asked before every attempt to write. v0.5.3's client-go slept whatever the
server said, with no bound: one ``Retry-After: 600`` froze the leader's renewal for ten minutes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import orjson

from tf_operator.k8s.client import deepjson
from tf_operator.k8s.client.errors import ApiError, TransportError, from_response
from tf_operator.k8s.client.resource import Resource
from tf_operator.k8s.client.scope import RequestAborted, RequestScope, current_scope
from tf_operator.k8s.client.transport import HttpTransport, StreamingResponse, Timeout
from tf_operator.k8s.client.watch import WatchStream

log = logging.getLogger(__name__)

PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
}
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# Slack added to a watch's server-side timeout before the client gives up
# reading a silent connection.
_WATCH_READ_SLACK = 30.0

# Attempts in all for a request the server keeps answering with Retry-After (client-go: 10).
MAX_RETRY_AFTER_ATTEMPTS = 10
# The longest one Retry-After wait (D65): a server asking for more is asked again after this.
MAX_RETRY_AFTER_WAIT = 10.0


def retry_after_seconds(status: int, headers: Any) -> int | None:
    """Seconds to wait before resending, when a ``status`` answer asks for it (client-go's
    ``checkWait``: 429 or any 5xx with an integer ``Retry-After`` header); else None."""
    if status != 429 and status < 500:
        return None
    value = headers.get("Retry-After") if headers is not None else None
    try:
        seconds = int(str(value).strip()) if value is not None else None
    except ValueError:
        return None
    return None if seconds is None or seconds < 0 else seconds


def encode(body: Any) -> bytes:
    """A request body as compact JSON (nested deeper than orjson goes: :mod:`.deepjson`)."""
    try:
        return orjson.dumps(body)
    except orjson.JSONEncodeError as err:
        if "Recursion limit" not in str(err):
            raise
        return deepjson.dumps(body)


def loads(data: bytes) -> Any:
    """One JSON document: orjson's, or :mod:`.deepjson`'s when it is too deep for orjson (an
    object kube-apiserver stores may nest 10,000 levels); ValueError when it is no JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as err:
        if "depth limit" not in str(err):
            raise
        return deepjson.loads(data)


def decode(data: bytes) -> Any:
    """A response body ({} when empty)."""
    try:
        return loads(data) if data else {}
    except ValueError as err:
        raise TransportError(f"undecodable response body: {err}: {data[:200]!r}") from err


def _bounded(timeout: Timeout, left: float | None) -> Timeout:
    """``timeout`` with no wait longer than ``left`` seconds."""
    if left is None:
        return timeout
    connect = left if timeout.connect is None else min(timeout.connect, left)
    read = left if timeout.read is None else min(timeout.read, left)
    return Timeout(connect=connect, read=read)


def wait_in_scope(scope: RequestScope, seconds: float) -> bool:
    """Wait out a Retry-After within ``scope``; True when its cancel event ended the wait."""
    return scope.wait(seconds)


class RestTransport:
    """JSON requests over an :class:`HttpTransport`, honouring Retry-After within bounds."""

    def __init__(
        self,
        http: HttpTransport,
        request_timeout: float | None = 60.0,
        wait: Callable[[RequestScope, float], bool] = wait_in_scope,
    ) -> None:
        self.http = http
        self.request_timeout = request_timeout
        self.wait = wait  # a seam: tests record the waits instead of sleeping
        self._timeout = Timeout(
            connect=30.0 if request_timeout is None else min(30.0, request_timeout),
            read=request_timeout,
        )

    @property
    def host(self) -> str:
        return self.http.host

    def _scope(self, stream: bool) -> RequestScope:
        """The caller's scope, its deadline cut to ``request_timeout`` from now (not for a
        stream, which lives as long as its reader wants)."""
        scope = current_scope()
        if stream or self.request_timeout is None:
            return scope
        own = time.monotonic() + self.request_timeout
        return replace(scope, deadline=own if scope.deadline is None else min(scope.deadline, own))

    def _send(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None,
        body: Any,
        content_type: str | None,
        timeout: Timeout | None,
        stream: bool,
        honour_retry_after: bool,
    ) -> bytes | StreamingResponse:
        payload = None if body is None else encode(body)
        scope = self._scope(stream)
        what, write = f"{method} {path}", method in WRITE_METHODS
        error: ApiError | None = None  # the answer that made us wait, if any
        attempt = 1
        while True:
            try:
                scope.check(what, write)
            except RequestAborted as abort:
                if error is None:
                    raise
                raise abort from error
            if stream:
                status, headers, data = self.http.stream(
                    method, path, query, timeout or self._timeout, scope.deadline
                )
            else:
                bounded = _bounded(timeout or self._timeout, scope.remaining())
                status, headers, data = self.http.send(
                    method, path, query, payload, content_type, bounded, scope.deadline
                )
            if status < 300:
                return data
            raw = data if isinstance(data, bytes) else b""
            error = from_response(status, raw, headers)
            seconds = retry_after_seconds(status, headers)
            if seconds is None or not honour_retry_after or attempt >= MAX_RETRY_AFTER_ATTEMPTS:
                raise error
            wait = min(float(seconds), MAX_RETRY_AFTER_WAIT)
            left = scope.remaining()
            if left is not None and wait >= left:
                raise error  # the wait would outlast the request: answer the caller now
            log.debug(
                "%s: got %d with Retry-After %ds (attempt %d); retrying in %.0fs",
                what,
                status,
                seconds,
                attempt,
                wait,
            )
            self.wait(scope, wait)  # a cancel ends it; the check above then gives up
            attempt += 1

    def open(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        timeout: Timeout | None = None,
    ) -> StreamingResponse:
        """Send a request and return the unread response (2xx only); not retried."""
        response = self._send(method, path, query, None, None, timeout, True, False)
        assert isinstance(response, StreamingResponse)
        return response

    def request(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> dict[str, Any]:
        """Send a request and return the decoded JSON body ({} when empty)."""
        data = self._send(method, path, query, body, content_type, None, False, True)
        assert isinstance(data, bytes)
        result: dict[str, Any] = decode(data)
        return result

    def request_list(self, path: str, query: dict[str, Any] | None = None) -> dict[str, Any]:
        """GET a List."""
        return self.request("GET", path, query=query)


def _namespace_of(body: dict[str, Any], namespace: str | None) -> str | None:
    return namespace if namespace is not None else (body.get("metadata") or {}).get("namespace")


def _name_of(body: dict[str, Any]) -> str:
    name = (body.get("metadata") or {}).get("name")
    if not name:
        raise ValueError("object has no metadata.name")
    return str(name)


def delete_options(
    propagation_policy: str | None = None,
    grace_period_seconds: int | None = None,
    preconditions_uid: str | None = None,
) -> dict[str, Any]:
    """A ``DeleteOptions`` body."""
    opts: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if propagation_policy is not None:
        opts["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        opts["gracePeriodSeconds"] = grace_period_seconds
    if preconditions_uid is not None:
        opts["preconditions"] = {"uid": preconditions_uid}
    return opts


def list_query(
    label_selector: Any = None,
    field_selector: Any = None,
    resource_version: str | None = None,
    limit: int | None = None,
    continue_token: str | None = None,
) -> dict[str, Any]:
    query: dict[str, Any] = {}
    if label_selector is not None and str(label_selector):
        query["labelSelector"] = str(label_selector)
    if field_selector is not None and str(field_selector):
        query["fieldSelector"] = str(field_selector)
    if resource_version is not None:
        query["resourceVersion"] = resource_version
    if limit:
        query["limit"] = int(limit)
    if continue_token:
        query["continue"] = continue_token
    return query


class ResourceClient:
    """CRUD, list and watch for one resource; objects in and out are dicts."""

    def __init__(self, transport: RestTransport, resource: Resource) -> None:
        self.transport = transport
        self.resource = resource

    def _path(self, namespace: str | None, name: str | None = None, sub: str | None = None) -> str:
        if name is not None and self.resource.namespaced and not namespace:
            raise ValueError(f"{self.resource.plural} {name!r}: a namespace is required")
        return self.resource.path(namespace, name, sub)

    def list(
        self,
        namespace: str | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> dict[str, Any]:
        """One List object (one page when ``limit`` is given; see ``metadata.continue``)."""
        query = list_query(label_selector, field_selector, resource_version, limit, continue_token)
        return self.transport.request_list(self._path(namespace), query=query)

    def watch(
        self,
        namespace: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        label_selector: Any = None,
        field_selector: Any = None,
        allow_bookmarks: bool = False,
    ) -> WatchStream:
        """Open a watch; iterate the result for ``(event_type, object)``."""
        query = list_query(label_selector, field_selector, resource_version)
        query["watch"] = "true"
        if timeout_seconds is not None:
            query["timeoutSeconds"] = int(timeout_seconds)
        if allow_bookmarks:
            query["allowWatchBookmarks"] = "true"
        read = None if timeout_seconds is None else float(timeout_seconds) + _WATCH_READ_SLACK
        response = self.transport.open(
            "GET", self._path(namespace), query=query, timeout=Timeout(connect=30.0, read=read)
        )
        return WatchStream(response)

    def get(self, name: str, namespace: str | None = None) -> dict[str, Any]:
        return self.transport.request("GET", self._path(namespace, name))

    def create(
        self,
        body: dict[str, Any],
        namespace: str | None = None,
        subresource: str | None = None,
        name: str | None = None,
    ) -> dict[str, Any]:
        """POST the object; with ``subresource`` (e.g. binding), POST to ``name``'s subresource."""
        ns = _namespace_of(body, namespace)
        if subresource:
            path = self._path(ns, name or _name_of(body), subresource)
        else:
            path = self._path(ns)
        return self.transport.request("POST", path, body=body)

    def update(self, body: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        ns = _namespace_of(body, namespace)
        return self.transport.request("PUT", self._path(ns, _name_of(body)), body=body)

    def update_status(self, body: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        ns = _namespace_of(body, namespace)
        return self.transport.request("PUT", self._path(ns, _name_of(body), "status"), body=body)

    def patch(
        self,
        name: str,
        body: Any,
        namespace: str | None = None,
        patch_type: str = "merge",
        subresource: str | None = None,
    ) -> dict[str, Any]:
        try:
            content_type = PATCH_CONTENT_TYPES[patch_type]
        except KeyError:
            raise ValueError(f"unknown patch type {patch_type!r}") from None
        path = self._path(namespace, name, subresource)
        return self.transport.request("PATCH", path, body=body, content_type=content_type)

    def delete(
        self,
        name: str,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions_uid: str | None = None,
    ) -> dict[str, Any]:
        """DELETE; returns what the server returned (the object or a Status)."""
        opts = delete_options(propagation_policy, grace_period_seconds, preconditions_uid)
        return self.transport.request("DELETE", self._path(namespace, name), body=opts)
