"""An HTTP front for :class:`FakeKubeClient` that speaks the API wire format.

Tests and benchmarks point the real :class:`ResourceClient` (and so the real
``kubernetes`` ``ApiClient`` connection pool) at it to exercise the actual
wire path: JSON lists, chunked newline-delimited watch streams, Status error
bodies. It serves only the resources it is given, binds to 127.0.0.1, and
offers hooks to cut watches off. It is a test double, not an API server.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from tf_operator.k8s.client import errors
from tf_operator.k8s.client.fake import FakeKubeClient, FakeWatchStream
from tf_operator.k8s.client.resource import Resource

log = logging.getLogger(__name__)

_PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/json-patch+json": "json",
}


class FakeAPIServer:
    """Serve ``fake``'s ``resources`` over HTTP on 127.0.0.1 until :meth:`stop`."""

    def __init__(self, fake: FakeKubeClient, resources: list[Resource], port: int = 0) -> None:
        self.fake = fake
        self.resources = {(r.group, r.version, r.plural): r for r in resources}
        self.watch_streams: list[FakeWatchStream] = []
        self._lock = threading.Lock()
        handler = type("_Handler", (_Handler,), {"server_ref": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.requests: list[tuple[str, str]] = []

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAPIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        with self._lock:
            streams = list(self.watch_streams)
        for s in streams:
            s.close()
        self.httpd.server_close()

    def __enter__(self) -> FakeAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def route(self, path: str) -> tuple[Resource, str | None, str | None, str | None]:
        """(resource, namespace, name, subresource) for a URL path; KeyError if unknown."""
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise KeyError(path)
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        resource = self.resources[(group, version, rest[0])]
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        return resource, namespace, name, sub


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_ref: FakeAPIServer

    def log_message(self, fmt: str, *args: Any) -> None:
        log.debug("fake apiserver: " + fmt, *args)

    # ---- plumbing ---------------------------------------------------------------------
    def _send_json(self, code: int, body: Any) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length)) if length else None

    def _dispatch(self, method: str) -> None:
        url = urlparse(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.server_ref.requests.append((method, self.path))
        try:
            resource, ns, name, sub = self.server_ref.route(url.path)
        except (KeyError, IndexError):
            self._send_json(
                404,
                errors.status_body(
                    404, "NotFound", "the server could not find the requested resource"
                ),
            )
            return
        rc = self.server_ref.fake.resource(resource)
        try:
            if method == "GET" and name is None and q.get("watch") in ("true", "1"):
                self._watch(rc, ns, q)
                return
            if method == "GET" and name is None:
                result = rc.list(
                    ns,
                    q.get("labelSelector"),
                    q.get("fieldSelector"),
                    q.get("resourceVersion"),
                    int(q["limit"]) if q.get("limit") else None,
                    q.get("continue"),
                )
            elif method == "GET":
                result = rc.get(name, ns)
            elif method == "POST":
                result = rc.create(self._body(), ns)
                self._send_json(201, result)
                return
            elif method == "PUT" and sub == "status":
                result = rc.update_status(self._body(), ns)
            elif method == "PUT":
                result = rc.update(self._body(), ns)
            elif method == "PATCH":
                ptype = _PATCH_TYPES.get(self.headers.get("Content-Type", ""), "merge")
                result = rc.patch(name, self._body(), ns, ptype, sub)
            elif method == "DELETE":
                opts = self._body() or {}
                result = rc.delete(
                    name,
                    ns,
                    opts.get("propagationPolicy"),
                    opts.get("gracePeriodSeconds"),
                    (opts.get("preconditions") or {}).get("uid"),
                )
            else:
                self._send_json(405, errors.status_body(405, "MethodNotAllowed", method))
                return
        except errors.ApiError as exc:
            body = exc.body or errors.status_body(exc.status or 500, exc.reason, exc.message)
            self._send_json(exc.status or 500, body)
            return
        self._send_json(200, result)

    def _watch(self, rc: Any, ns: str | None, q: dict[str, str]) -> None:
        stream = rc.watch(
            ns, q.get("resourceVersion"), None, q.get("labelSelector"), q.get("fieldSelector")
        )
        timeout = float(q["timeoutSeconds"]) if q.get("timeoutSeconds") else None
        timer = threading.Timer(timeout, stream.end) if timeout else None
        with self.server_ref._lock:
            self.server_ref.watch_streams.append(stream)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if timer:
                timer.start()
            for event_type, obj in stream:
                line = json.dumps({"type": event_type, "object": obj}, separators=(",", ":"))
                data = line.encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception:  # a broken stream: drop the connection like a dying server
            self.close_connection = True
        finally:
            if timer:
                timer.cancel()
            stream.close()
            with self.server_ref._lock:
                if stream in self.server_ref.watch_streams:
                    self.server_ref.watch_streams.remove(stream)

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")


def kube_client_for(url: str, request_timeout: float | None = 30.0) -> Any:
    """A real :class:`KubeClient` pointed at ``url`` with no credentials."""
    from kubernetes import client as k8s_client

    from tf_operator.k8s.client.kube import CONNECTION_POOL_MAXSIZE, USER_AGENT, KubeClient

    cfg = k8s_client.Configuration()
    cfg.host = url
    cfg.connection_pool_maxsize = CONNECTION_POOL_MAXSIZE
    api_client = k8s_client.ApiClient(configuration=cfg)
    api_client.user_agent = USER_AGENT
    return KubeClient(api_client, request_timeout)
