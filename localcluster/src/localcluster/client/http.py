"""``HttpClient``: the ``ClusterClient`` over HTTP(S) to any Kubernetes API server.

The emulator's own listener or a real kube-apiserver: JSON bodies on the REST paths every
API server serves, a bearer token or a client certificate, the server verified against a CA
file (or not at all, when told to skip it). One ``urllib3.PoolManager`` keeps connections
alive across requests and threads.

Errors: a reply that is not 2xx becomes the ``StatusError`` its ``Status`` body describes (code,
reason, message, details; ``Retry-After`` for 429), so callers catch exactly what the in-process
client raises; a server that cannot be reached is a 503 ``ServiceUnavailable``.

Watches (``HttpWatch``) are streamed JSON lines read by a thread of their own into a queue, as
client-go's ``StreamWatcher`` decodes them. They ask for bookmarks (``allowWatchBookmarks``) and
keep the newest resourceVersion they saw, from events and bookmarks alike; when the server ends
the stream (its ``timeoutSeconds``, or a dropped connection) the watch resumes from that RV on a
new request, as client-go's reflector re-watches, so the consumer sees one unbroken stream.
Only a 410 ``Expired`` (the RV left the server's history) or another failure ends it: the
consumer gets the ``ERROR`` event and relists (``informer``). Bookmarks never reach the consumer.
"""

from __future__ import annotations

import base64
import logging
import os
import random
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import orjson
import urllib3
import yaml

from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.gvr import GVR
from localcluster.client.api import Object, Page, PatchType, ResourceInfo

logger = logging.getLogger(__name__)

PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}

# The Status reason a bare HTTP code stands for, when a reply carries no Status body.
_REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}

# client-go's reflector asks for a server-side watch timeout between 5 and 10 minutes, so the
# watches of many clients do not all end together.
MIN_WATCH_TIMEOUT_SECONDS = 300
# A watch read waits this much longer than the server's timeout before calling the stream dead.
WATCH_READ_GRACE_SECONDS = 30.0
# Discovery documents are read again after this long (CRDs come and go).
DISCOVERY_TTL_SECONDS = 10.0
_READ_SIZE = 64 * 1024


def status_error(code: int, body: bytes, headers: Any = None) -> StatusError:
    """The ``StatusError`` an HTTP error reply stands for."""
    status: Any = None
    try:
        status = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        status = None
    retry_after = None
    if headers is not None and headers.get("Retry-After", "").isdigit():
        retry_after = int(headers["Retry-After"])
    if isinstance(status, dict) and status.get("kind") == "Status":
        return StatusError(
            int(status.get("code") or code),
            str(status.get("reason") or _REASONS.get(code, "Unknown")),
            str(status.get("message") or ""),
            status.get("details") or None,
            retry_after,
        )
    text = body.decode("utf-8", "replace").strip()
    return StatusError(
        code, _REASONS.get(code, "Unknown"), text or f"HTTP {code}", None, retry_after
    )


def unreachable(err: Exception) -> StatusError:
    """A transport failure, as the 503 an agent already knows how to retry."""
    return StatusError(503, "ServiceUnavailable", f"the API server could not be reached: {err}")


def resource_path(
    gvr: GVR, namespace: str | None, name: str | None = None, subresource: str | None = None
) -> str:
    """The REST path of a collection, an object or one of its subresources."""
    group, version, plural = gvr
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if namespace:
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{plural}"
    if name:
        path += f"/{quote(name, safe='')}"
        if subresource:
            path += f"/{subresource}"
    return path


class HttpClient:
    """``ClusterClient`` over HTTP(S) (see the module docstring).

    ``server`` is the API server's base URL. Credentials: ``token`` (a bearer token) and/or
    ``client_cert`` (a (certificate file, key file) pair). The server is verified against
    ``ca_file`` (or the system's roots without one) unless ``insecure_skip_tls_verify``.
    ``timeout`` bounds every request but a watch.
    """

    def __init__(
        self,
        server: str,
        *,
        token: str | None = None,
        ca_file: str | None = None,
        client_cert: tuple[str, str] | None = None,
        insecure_skip_tls_verify: bool = False,
        user_agent: str = "localcluster",
        timeout: float = 30.0,
        pool_size: int = 64,
    ) -> None:
        self.server = server.rstrip("/")
        self._headers = {"Accept": "application/json", "User-Agent": user_agent}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        tls: dict[str, Any] = {}
        if self.server.startswith("https://"):
            if insecure_skip_tls_verify:
                tls["cert_reqs"] = "CERT_NONE"
            else:
                tls["cert_reqs"] = "CERT_REQUIRED"
                if ca_file:
                    tls["ca_certs"] = ca_file
            if client_cert is not None:
                tls["cert_file"], tls["key_file"] = client_cert
        self._pool = urllib3.PoolManager(
            num_pools=4,
            maxsize=pool_size,
            retries=urllib3.Retry(total=2, connect=2, read=1, redirect=0, status=0, other=0),
            timeout=urllib3.Timeout(connect=min(timeout, 10.0), read=timeout),
            **tls,
        )
        self._discovery: dict[str, tuple[float, dict[str, ResourceInfo]]] = {}
        self._discovery_lock = threading.Lock()

    @classmethod
    def from_kubeconfig(cls, path: str, *, user_agent: str = "localcluster") -> HttpClient:
        """A client for the current context of the kubeconfig at ``path`` (token, client
        certificate, CA: as files or inline data)."""
        with open(path, encoding="utf-8") as f:
            config: dict[str, Any] = yaml.safe_load(f) or {}
        context_name = config.get("current-context")
        contexts = {c["name"]: c["context"] for c in config.get("contexts") or []}
        context: dict[str, Any] = contexts.get(context_name) or next(iter(contexts.values()), {})
        cluster = _named(config, "clusters", "cluster", context.get("cluster"))
        user = _named(config, "users", "user", context.get("user"))
        base = os.path.dirname(os.path.abspath(path))
        ca_file = _file_or_data(cluster, "certificate-authority", base)
        cert = _file_or_data(user, "client-certificate", base)
        key = _file_or_data(user, "client-key", base)
        return cls(
            cluster["server"],
            token=user.get("token"),
            ca_file=ca_file,
            client_cert=(cert, key) if cert and key else None,
            insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
            user_agent=user_agent,
        )

    # -- transport ------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        *,
        stream: bool = False,
        read_timeout: float | None = None,
    ) -> urllib3.BaseHTTPResponse:
        """One request; a non-2xx reply raises its ``StatusError``. With ``stream`` the body is
        left unread for the caller (who must close the response)."""
        url = self.server + path
        params = {k: v for k, v in (query or {}).items() if v is not None}
        if params:
            url += "?" + urlencode(params)
        headers = dict(self._headers)
        data = None
        if body is not None:
            data = orjson.dumps(body)
            headers["Content-Type"] = content_type
        kwargs: dict[str, Any] = {}
        if read_timeout is not None:
            kwargs["timeout"] = urllib3.Timeout(connect=10.0, read=read_timeout)
        try:
            resp = self._pool.request(
                method, url, body=data, headers=headers, preload_content=not stream, **kwargs
            )
        except urllib3.exceptions.HTTPError as err:
            raise unreachable(err) from err
        if resp.status >= 300:
            payload = resp.data if not stream else _read_all(resp)
            raise status_error(resp.status, payload, resp.headers)
        return resp

    def _json(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Any:
        resp = self.request(method, path, query, body, content_type)
        try:
            return orjson.loads(resp.data) if resp.data else None
        except orjson.JSONDecodeError as err:
            raise StatusError(500, "InternalError", f"the reply is not JSON: {err}") from err

    # -- ClusterClient ----------------------------------------------------------------------

    def get(self, gvr: GVR, namespace: str | None, name: str, *, shared: bool = False) -> Object:
        obj: Object = self._json("GET", resource_path(gvr, namespace, name))
        return obj

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
        query = {
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
            "limit": limit,
            "continue": continue_token or None,
        }
        body = self._json("GET", resource_path(gvr, namespace), query)
        meta = body.get("metadata") or {}
        items = body.get("items") or []
        kind = str(body.get("kind") or "")
        if kind.endswith("List"):  # items come without apiVersion/kind; a watch has them
            item_kind = kind[: -len("List")]
            api_version = body.get("apiVersion")
            for item in items:
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", item_kind)
        return Page(items, str(meta.get("resourceVersion") or ""), meta.get("continue") or None)

    def watch(
        self,
        gvr: GVR,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> HttpWatch:
        query = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
        }
        return HttpWatch(self, resource_path(gvr, namespace), query, resource_version)

    def create(
        self, gvr: GVR, namespace: str | None, obj: Object, *, shared: bool = False
    ) -> Object:
        created: Object = self._json("POST", resource_path(gvr, namespace), body=obj)
        return created

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
        path = resource_path(gvr, namespace, name, subresource)
        updated: Object = self._json("PUT", path, body=obj)
        return updated

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
        path = resource_path(gvr, namespace, name, subresource)
        patched: Object = self._json(
            "PATCH", path, body=patch, content_type=PATCH_CONTENT_TYPES[patch_type]
        )
        return patched

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
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = dict(preconditions)
        self.request("DELETE", resource_path(gvr, namespace, name), body=options)

    def bind(self, namespace: str, name: str, node_name: str, *, shared: bool = False) -> Object:
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        pods: GVR = ("", "v1", "pods")
        self.request("POST", resource_path(pods, namespace, name, "binding"), body=binding)
        return self.get(pods, namespace, name)  # a Binding answers with a Status, not the pod

    def create_token(self, namespace: str, service_account: str, token_request: Object) -> Object:
        path = resource_path(("", "v1", "serviceaccounts"), namespace, service_account, "token")
        answer: Object = self._json("POST", path, body=token_request)
        return answer

    def resource_info(self, gvr: GVR) -> ResourceInfo:
        group, version, plural = gvr
        group_version = f"{group}/{version}" if group else version
        now = time.monotonic()
        with self._discovery_lock:
            cached = self._discovery.get(group_version)
        if cached is None or now - cached[0] > DISCOVERY_TTL_SECONDS or plural not in cached[1]:
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            cached = (now, _resources(self._json("GET", path)))
            with self._discovery_lock:
                self._discovery[group_version] = cached
        info = cached[1].get(plural)
        if info is None:
            raise StatusError(404, "NotFound", f"the server does not serve {plural}.{group}")
        return info

    def close(self) -> None:
        self._pool.clear()


def _resources(document: Any) -> dict[str, ResourceInfo]:
    """``APIResourceList`` -> resource name -> what it is."""
    entries = (document or {}).get("resources") or []
    subresources: dict[str, set[str]] = {}
    namespaced: dict[str, bool] = {}
    for entry in entries:
        name = str(entry.get("name") or "")
        if "/" in name:
            parent, _, sub = name.partition("/")
            subresources.setdefault(parent, set()).add(sub)
        else:
            namespaced[name] = bool(entry.get("namespaced"))
    return {
        name: ResourceInfo(ns, frozenset(subresources.get(name, ())))
        for name, ns in namespaced.items()
    }


def _read_all(resp: urllib3.BaseHTTPResponse) -> bytes:
    try:
        return resp.read()
    finally:
        resp.release_conn()


def _named(config: dict[str, Any], section: str, key: str, name: str | None) -> dict[str, Any]:
    entries = {e["name"]: e.get(key) or {} for e in config.get(section) or []}
    if name in entries:
        return entries[name]
    return next(iter(entries.values()), {})


def _file_or_data(entry: dict[str, Any], field: str, base: str) -> str | None:
    """The path of ``field`` (relative to the kubeconfig) or of a file holding ``field-data``."""
    if entry.get(field):
        return str(os.path.join(base, entry[field]))
    data = entry.get(f"{field}-data")
    if not data:
        return None
    fd, path = tempfile.mkstemp(prefix="localcluster-kubeconfig-", suffix=".pem")
    with os.fdopen(fd, "wb") as f:
        f.write(base64.b64decode(data))
    return path


class HttpWatch:
    """One watch over HTTP, as a ``WatchStream`` (see the module docstring).

    The first request is made by the constructor, so a 404 or 410 raises at once, as the
    in-process watch raises; the reader thread then owns the stream and every later request.
    """

    def __init__(
        self,
        client: HttpClient,
        path: str,
        query: dict[str, Any],
        resource_version: str | None,
    ) -> None:
        self._client = client
        self._path = path
        self._query = query
        self._rv = resource_version if resource_version not in (None, "", "0") else None
        self._queue: deque[tuple[str, Object]] = deque()
        self._ready = threading.Event()
        self._closed = False
        self.close_reason = ""
        self._stopped = False
        self._lock = threading.Lock()
        self._resp: urllib3.BaseHTTPResponse | None = self._open(resource_version)
        self._thread = threading.Thread(target=self._read_loop, name="http-watch", daemon=True)
        self._thread.start()

    # -- WatchStream ------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def resource_version(self) -> str | None:
        """The newest resourceVersion seen (an event's or a bookmark's)."""
        return self._rv

    def pending(self) -> int:
        return len(self._queue)

    def wait(self, timeout: float) -> bool:
        if self._queue or self._closed:
            return True
        self._ready.clear()
        if not self._queue and not self._closed:
            self._ready.wait(timeout)
        return bool(self._queue) or self._closed

    def get_shared(self, timeout: float) -> tuple[str, Object] | None:
        queue = self._queue
        if queue:
            return queue.popleft()
        if self._closed:
            return None
        self._ready.clear()
        if not queue and not self._closed and timeout > 0:
            self._ready.wait(timeout)
        return queue.popleft() if queue else None

    def close(self, reason: str) -> None:
        if not self._closed:
            self.close_reason = reason
            self._closed = True
        self._ready.set()

    def stop(self) -> None:
        self._stopped = True
        self.close("stopped by client")
        with self._lock:
            resp, self._resp = self._resp, None
        if resp is not None:
            _shut(resp)

    # -- the reader -------------------------------------------------------------------------

    def _open(self, resource_version: str | None) -> urllib3.BaseHTTPResponse:
        timeout = random.randint(MIN_WATCH_TIMEOUT_SECONDS, 2 * MIN_WATCH_TIMEOUT_SECONDS)
        query = dict(self._query, timeoutSeconds=timeout, resourceVersion=resource_version)
        return self._client.request(
            "GET",
            self._path,
            query,
            stream=True,
            read_timeout=timeout + WATCH_READ_GRACE_SECONDS,
        )

    def _read_loop(self) -> None:
        try:
            while not self._stopped:
                resp = self._resp
                if resp is None:
                    return
                ended = self._consume(resp)
                if ended or self._stopped:
                    return
                if self._rv is None:  # nothing to resume from: the consumer relists
                    self.close("watch ended before any resourceVersion")
                    return
                try:  # the server ended the stream: resume where it left off
                    fresh = self._open(self._rv)
                except StatusError as err:
                    self._fail(err.status, err.message)
                    return
                with self._lock:
                    if self._stopped:
                        _shut(fresh)
                        return
                    self._resp = fresh
        finally:
            self._ready.set()

    def _consume(self, resp: urllib3.BaseHTTPResponse) -> bool:
        """Queue the stream's events until it ends; True when the watch is over (an ERROR
        event, or stopped), False when the server merely ended this stream."""
        buffer = b""
        try:
            for chunk in _chunks(resp):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip() and self._event(line):
                        return True
            if buffer.strip() and self._event(buffer):
                return True
        except Exception as err:  # noqa: BLE001 - a broken stream is resumed like an ended one
            if self._stopped:
                return True
            logger.debug("watch %s: stream broke (%s); resuming", self._path, err)
        finally:
            resp.release_conn()
        return self._stopped

    def _event(self, line: bytes) -> bool:
        """Handle one JSON line; True when it ended the watch."""
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            self._fail(None, f"undecodable watch event: {line[:200]!r}")
            return True
        etype, obj = event.get("type"), event.get("object") or {}
        if etype == "ERROR":
            self._fail(obj, str(obj.get("message") or "watch error"))
            return True
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if rv:
            self._rv = str(rv)
        if etype == "BOOKMARK":
            return False
        self._queue.append((str(etype), obj))
        self._ready.set()
        return False

    def _fail(self, status: Object | None, message: str) -> None:
        """End the watch with an ``ERROR`` event carrying ``status`` for the consumer."""
        error = status or {"kind": "Status", "apiVersion": "v1", "status": "Failure"}
        error.setdefault("message", message)
        self._queue.append(("ERROR", error))
        self.close(message)


def _chunks(resp: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    """The body's bytes as they arrive (chunk by chunk when chunked)."""
    if isinstance(resp, urllib3.HTTPResponse) and resp.chunked and resp.supports_chunked_reads():
        yield from resp.read_chunked(decode_content=True)
        return
    while True:
        data = resp.read1(_READ_SIZE)
        if not data:
            return
        yield data


def _shut(resp: urllib3.BaseHTTPResponse) -> None:
    """Close a streaming reply from another thread, waking its blocked reader."""
    try:
        shutdown = getattr(resp, "shutdown", None)
        if shutdown is not None:
            shutdown()
        resp.close()
    except Exception:  # noqa: BLE001 - closing a dead stream
        logger.debug("closing a watch stream failed", exc_info=True)
