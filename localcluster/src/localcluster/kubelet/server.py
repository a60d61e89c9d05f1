"""The kubelets' HTTPS server: ``GET /containerLogs/{namespace}/{pod}/{container}``.

What kube-apiserver's ``pods/{name}/log`` proxies to: it connects to the node's
``status.daemonEndpoints.kubeletEndpoint.Port`` at the node's address, presenting its
``--kubelet-client-certificate``. One server serves every kubelet of a local cluster (the
``LogSource`` finds the kubelet that runs the pod). As the kubelet's server does:

- TLS with a serving certificate; a client must present a certificate signed by the CA file
  given at start (``--client-ca-file``), or the handshake fails;
- the query is a ``PodLogOptions``: ``follow``, ``tailLines``, ``limitBytes``, ``previous``,
  ``timestamps``, ``sinceSeconds`` or ``sinceTime`` (not both), refused with 422 when invalid
  (``ValidatePodLogOptions``: negative tail, limit or since);
- 400 for a container that has not started yet (``... is waiting to start: ContainerCreating``)
  or a ``previous`` instance that never ran;
- 404 for a pod this node does not run or a container the pod does not have; the log is
  ``text/plain``, flushed as it is read while following.

``GET /healthz`` answers ``ok``. Requests run on threads of their own; the TLS handshake happens
on the request's thread, never in the accept loop.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from localcluster.kubelet.runtime import LogRequest, LogUnavailable

logger = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT = 10.0


class LogNotFound(LookupError):
    """The pod is not on this node, or has no such container (a 404)."""


class LogSource(Protocol):
    def __call__(
        self, namespace: str, pod: str, container: str, request: LogRequest
    ) -> Iterator[bytes]:
        """The container's log as ``request`` asks; raises ``LogNotFound``."""
        ...


class BadOptions(ValueError):
    """Invalid ``PodLogOptions`` (a 422)."""


def parse_log_options(query: dict[str, list[str]], now: float) -> LogRequest:
    """``PodLogOptions`` from a query string, validated as ``ValidatePodLogOptions`` does."""

    def one(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values else None

    def flag(name: str) -> bool:
        return (one(name) or "").lower() in ("1", "true", "t")

    def integer(name: str, minimum: int) -> int | None:
        text = one(name)
        if text is None:
            return None
        try:
            value = int(text)
        except ValueError as err:
            raise BadOptions(f"{name}: Invalid value: {text!r}: must be an integer") from err
        if value < minimum:
            raise BadOptions(f"{name}: Invalid value: {value}: must be at least {minimum}")
        return value

    tail = integer("tailLines", 0)
    limit = integer("limitBytes", 1)
    since_seconds = integer("sinceSeconds", 1)
    since_text = one("sinceTime")
    if since_seconds is not None and since_text is not None:
        raise BadOptions("at most one of sinceTime or sinceSeconds may be specified")
    since: float | None = None
    if since_seconds is not None:
        since = now - since_seconds
    elif since_text is not None:
        try:
            since = datetime.fromisoformat(since_text.replace("Z", "+00:00")).timestamp()
        except ValueError as err:
            raise BadOptions(f"sinceTime: Invalid value: {since_text!r}") from err
    return LogRequest(
        follow=flag("follow"),
        tail_lines=tail,
        limit_bytes=limit,
        previous=flag("previous"),
        timestamps=flag("timestamps"),
        since_time=since,
    )


class KubeletServer:
    """The HTTPS server (see the module docstring). ``port`` 0 picks a free one."""

    def __init__(
        self,
        logs: LogSource,
        cert_file: str,
        key_file: str,
        client_ca_file: str,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.host = host
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        context.load_verify_locations(client_ca_file)
        context.verify_mode = ssl.CERT_REQUIRED
        self._httpd = _TLSServer((host, port), _handler(logs), context)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    def start(self) -> KubeletServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.2}, name="kubelet-https"
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.stop_streams()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(5)
        self._httpd.server_close()


class _TLSServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any, context: ssl.SSLContext) -> None:
        self.context = context
        self._lock = threading.Lock()
        self._streams: set[threading.Event] = set()  # the stop events of the logs being read
        super().__init__(address, handler)

    def streaming(self, stop: threading.Event) -> None:
        with self._lock:
            self._streams.add(stop)

    def done_streaming(self, stop: threading.Event) -> None:
        with self._lock:
            self._streams.discard(stop)

    def stop_streams(self) -> None:
        """End every log being followed (the server is stopping)."""
        with self._lock:
            for stop in self._streams:
                stop.set()

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Handshake on the request's own thread; a client without a valid certificate is
        dropped here."""
        request.settimeout(HANDSHAKE_TIMEOUT)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as err:
            logger.debug("kubelet server: TLS handshake with %s failed: %s", client_address, err)
            return
        tls.settimeout(None)
        try:
            super().finish_request(tls, client_address)
        finally:
            with contextlib.suppress(OSError):
                tls.shutdown(socket.SHUT_RDWR)
            tls.close()


def _handler(logs: LogSource) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server: _TLSServer

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            logger.debug("kubelet server: " + format, *args)

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            url = urlsplit(self.path)
            parts = [unquote(p) for p in url.path.strip("/").split("/")]
            if parts == ["healthz"]:
                self._reply(200, b"ok")
                return
            if len(parts) != 4 or parts[0] != "containerLogs" or not all(parts[1:]):
                self._reply(404, b"404 page not found\n")
                return
            _, namespace, pod, container = parts
            try:
                request = parse_log_options(parse_qs(url.query), time.time())
            except BadOptions as err:
                self._reply(422, f"{err}\n".encode())
                return
            try:
                chunks = logs(namespace, pod, container, request)
            except LogNotFound as err:
                self._reply(404, f"{err}\n".encode())
                return
            except LogUnavailable as err:  # not started yet, or no previous instance
                self._reply(400, f"{err}\n".encode())
                return
            self._stream(chunks, request)

        def _reply(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _stream(self, chunks: Iterator[bytes], request: LogRequest) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            stop = request.stop_event
            self.server.streaming(stop)
            try:
                for chunk in chunks:
                    if chunk:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                pass  # the client went away
            finally:
                stop.set()
                self.server.done_streaming(stop)
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
            self.close_connection = True

    return Handler
