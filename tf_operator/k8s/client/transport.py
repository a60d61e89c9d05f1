"""HTTP/1.1 to the API server over kept-alive connections, with nothing per request but
the request.

What the official client did on every request (look up proxy settings in the environment,
build the auth settings, normalise a pool key, parse the URL, copy header dicts, build a
``Retry``) is done once here: :class:`HttpTransport` parses the server URL and builds the TLS
context and the constant headers when it is made. A request takes an idle connection from a
small LIFO pool (or opens one), sends the request line, headers and body, reads the answer
and puts the connection back: a thread that makes requests one after another reuses the same
warm connection. Long-lived responses (watches, log streams, streamed lists) own their
connection and close it when done.

A kept-alive connection the server closed while it sat idle fails on first use; that
request is sent once more on a fresh connection (the server never saw it). Connecting
is retried ``CONNECT_ATTEMPTS`` times. Only the ``Authorization`` value is looked up per
request (a :class:`~.config.TokenSource` may rotate it).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from tf_operator.k8s.client.config import ClientConfig
from tf_operator.k8s.client.errors import TransportError

# Idle connections kept per transport (informers, workers, event senders and leader
# election share them; more concurrent requests than this simply open more connections).
MAX_IDLE_CONNECTIONS = 32
CONNECT_ATTEMPTS = 3
CONNECT_TIMEOUT = 30.0

# Errors of a reused connection that the server closed while it was idle.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


@dataclass(frozen=True)
class Timeout:
    """Seconds to connect and to wait for each read (None: wait forever)."""

    connect: float | None = CONNECT_TIMEOUT
    read: float | None = 60.0


class _HTTPSConnection(http.client.HTTPConnection):
    """HTTPS with a prepared context and an optional TLS server name (``tls-server-name``)."""

    default_port = 443

    def __init__(
        self,
        host: str,
        port: int | None,
        timeout: float | None,
        context: ssl.SSLContext,
        server_name: str | None,
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self._context = context
        self._server_name = server_name

    def connect(self) -> None:
        super().connect()
        tunnel_host: str | None = getattr(self, "_tunnel_host", None)
        name = self._server_name or tunnel_host or self.host
        self.sock = self._context.wrap_socket(self.sock, server_hostname=name)


class StreamingResponse:
    """An answer read as it arrives (watches, logs, big lists); owns its connection.

    ``read``/``read1`` as a file; ``shutdown`` (any thread) wakes a blocked reader;
    ``close`` (or ``release_conn``) closes the connection."""

    def __init__(
        self,
        conn: http.client.HTTPConnection,
        sock: socket.socket | None,
        response: http.client.HTTPResponse,
    ) -> None:
        self._conn = conn
        self._sock = sock  # the connection forgets it when the response is its last
        self._response = response
        self.status = response.status
        self.headers = response.headers

    def read(self, amt: int | None = None) -> bytes:
        return self._response.read(amt)

    def read1(self, amt: int = -1) -> bytes:
        return self._response.read1(amt)

    def shutdown(self) -> None:
        if self._sock is not None:
            self._sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._response.close()
        self._conn.close()

    release_conn = close


class HttpTransport:
    """Requests to one API server (see the module docstring). Thread-safe."""

    def __init__(
        self,
        config: ClientConfig,
        user_agent: str,
        max_idle: int = MAX_IDLE_CONNECTIONS,
    ) -> None:
        self.config = config
        url = urlsplit(config.host if "://" in config.host else f"https://{config.host}")
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"unsupported API server URL {config.host!r}")
        self.host = f"{url.scheme}://{url.netloc}{url.path.rstrip('/')}"
        self._scheme = url.scheme
        self._hostname = url.hostname
        self._port = url.port
        self._prefix = url.path.rstrip("/")
        self._ssl = config.ssl_context() if url.scheme == "https" else None
        self._proxy = urlsplit(config.proxy_url) if config.proxy_url else None
        self._auth = config.auth
        self._headers = {"User-Agent": user_agent, "Accept": "application/json"}
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._max_idle = max_idle
        self._closed = False

    # ---- connections -------------------------------------------------------------------

    def _new_connection(self, timeout: float | None) -> http.client.HTTPConnection:
        host, port = self._hostname, self._port
        if self._proxy is not None:
            host, port = self._proxy.hostname or "", self._proxy.port
        conn: http.client.HTTPConnection
        if self._ssl is not None:
            conn = _HTTPSConnection(host, port, timeout, self._ssl, self.config.tls_server_name)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=timeout)
        if self._proxy is not None and self._ssl is not None:
            conn.set_tunnel(self._hostname, self._port)
        return conn

    def _take(self) -> http.client.HTTPConnection | None:
        with self._lock:
            return self._idle.pop() if self._idle else None

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close the idle connections (streams in flight close themselves)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # ---- requests ----------------------------------------------------------------------

    def url(self, path: str, query: dict[str, Any] | None = None) -> str:
        """The request target: the path (absolute URL through an HTTP proxy) and query."""
        target = self._prefix + path
        if query:
            target += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        if self._proxy is not None and self._ssl is None:
            target = self.host[: len(self.host) - len(self._prefix)] + target
        return target

    def _headers_for(self, body: bytes | None, content_type: str | None) -> dict[str, str]:
        headers = dict(self._headers)
        auth = self._auth.authorization()
        if auth:
            headers["Authorization"] = auth
        if body is not None:
            headers["Content-Type"] = content_type or "application/json"
            headers["Content-Length"] = str(len(body))
        return headers

    def _connect(self, timeout: Timeout) -> http.client.HTTPConnection:
        """A new connection, connected (tried ``CONNECT_ATTEMPTS`` times)."""
        attempt = 1
        while True:
            conn = self._new_connection(timeout.connect)
            try:
                conn.connect()
                return conn
            except OSError as err:
                conn.close()
                if attempt >= CONNECT_ATTEMPTS:
                    raise TransportError(f"connecting to {self.host}: {err}") from err
                attempt += 1

    @staticmethod
    def _exchange(
        conn: http.client.HTTPConnection,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout: Timeout,
    ) -> http.client.HTTPResponse:
        assert conn.sock is not None
        conn.sock.settimeout(timeout.read)
        conn.putrequest(method, target, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders(body)
        return conn.getresponse()

    def send(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        timeout: Timeout | None = None,
        stream: bool = False,
    ) -> tuple[int, Any, bytes | StreamingResponse]:
        """Send one request: ``(status, headers, body)``; with ``stream`` (and a 2xx
        status) the body is a :class:`StreamingResponse` owning the connection."""
        target = self.url(path, query)
        headers = self._headers_for(body, content_type)
        timeout = timeout or Timeout()
        while True:
            conn = None if stream else self._take()
            reused = conn is not None
            if conn is None:
                conn = self._connect(timeout)
            sock = conn.sock
            try:
                response = self._exchange(conn, method, target, body, headers, timeout)
            except _STALE as err:
                conn.close()
                if reused:
                    continue  # the server closed an idle connection: it never saw this
                raise TransportError(f"{method} {self.host}{target}: {err}") from err
            except (OSError, http.client.HTTPException) as err:
                conn.close()
                raise TransportError(f"{method} {self.host}{target}: {err}") from err
            if stream and response.status < 300:
                return response.status, response.headers, StreamingResponse(conn, sock, response)
            try:
                data = response.read()
            except (OSError, http.client.HTTPException) as err:
                conn.close()
                raise TransportError(f"{method} {self.host}{target}: reading: {err}") from err
            if response.will_close:
                conn.close()
            else:
                self._give_back(conn)
            return response.status, response.headers, data
