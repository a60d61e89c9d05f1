"""A lean HTTP/1.1 server: keep-alive, chunked streaming, optional TLS per connection.

``http.server`` spends most of its time in the email header parser; this reads the request line
and headers directly, hands a ``Request`` to the application callback and lets it answer through
a ``Responder`` that writes each response with one ``sendall``. One thread per connection
(clients keep connections alive, so threads are reused for many requests). TLS handshakes
happen in the connection's thread, never in the accept loop.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import socketserver
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import parse_qs, unquote, urlsplit

log = logging.getLogger(__name__)

MAX_LINE = 65536
MAX_BODY = 64 * 1024 * 1024
STREAM_WRITE_TIMEOUT = 60.0  # a streaming peer that stops reading for this long is dropped


class ClientGone(Exception):
    """The peer closed the connection."""


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes = b""
    client: str = ""
    raw_target: str = ""
    keep_alive: bool = True
    extra: dict = field(default_factory=dict)

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name, default)


def _reason(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return "Unknown"


class Responder:
    """Writes responses for one request on one connection."""

    def __init__(self, sock: socket.socket, keep_alive: bool) -> None:
        self._sock = sock
        self.keep_alive = keep_alive
        self.started = False
        self.status = 0
        self._chunked = False

    def _head(self, code: int, headers: list[tuple[str, str]]) -> bytes:
        lines = [f"HTTP/1.1 {code} {_reason(code)}"]
        lines += [f"{k}: {v}" for k, v in headers]
        if not self.keep_alive:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def send(
        self,
        code: int,
        body: bytes,
        content_type: str = "application/json",
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        hdrs = [("Content-Type", content_type), ("Content-Length", str(len(body)))] + (
            headers or []
        )
        self.started = True
        self.status = code
        self._write(self._head(code, hdrs) + body)

    def start_stream(
        self,
        code: int = 200,
        content_type: str = "application/json",
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        """Begin a chunked response; the connection closes when it ends."""
        self.keep_alive = False
        self._chunked = True
        self._sock.settimeout(STREAM_WRITE_TIMEOUT)
        self.started = True
        self.status = code
        hdrs = [
            ("Content-Type", content_type),
            ("Transfer-Encoding", "chunked"),
            ("Cache-Control", "no-cache, private"),
        ] + (headers or [])
        self._write(self._head(code, hdrs))

    def chunk(self, data: bytes) -> None:
        if data:
            self._write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self) -> None:
        if self._chunked:
            self._chunked = False
            with contextlib.suppress(ClientGone):
                self._write(b"0\r\n\r\n")

    def client_gone(self) -> bool:
        """True when the peer has closed its side (checked without blocking)."""
        try:
            poller = select.poll()  # not select(): file descriptors may exceed FD_SETSIZE
            poller.register(self._sock, select.POLLIN | select.POLLHUP)
            if not poller.poll(0):
                return False
            if isinstance(self._sock, ssl.SSLSocket):
                return False  # cannot peek through TLS; broken pipes are caught on write
            return self._sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _write(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except (OSError, ValueError) as e:
            raise ClientGone(str(e)) from e


App = Callable[[Request, Responder], None]


class _Handler(socketserver.BaseRequestHandler):
    server: ThreadingServer

    def setup(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.server.ssl_context is not None:
            sock.settimeout(10)
            sock = self.server.ssl_context.wrap_socket(sock, server_side=True)
            sock.settimeout(None)
        self.sock = sock
        self.rfile = sock.makefile("rb", buffering=65536)
        self.server.track(self.request, True)

    def finish(self) -> None:
        self.server.track(self.request, False)
        with contextlib.suppress(OSError):
            self.rfile.close()

    def handle(self) -> None:
        client = f"{self.client_address[0]}:{self.client_address[1]}"
        while not self.server.stopping:
            try:
                req = self._read_request(client)
            except ValueError as e:  # unparsable framing: answer, then drop the connection
                self._bad(400, f"bad request: {e}")
                return
            except (OSError, ssl.SSLError):
                return
            if req is None:
                return
            resp = Responder(self.sock, req.keep_alive)
            try:
                self.server.app(req, resp)
            except ClientGone:
                return
            if not resp.keep_alive:
                return

    def _readline(self) -> bytes:
        line = self.rfile.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise ValueError("line too long")
        return line

    def _read_request(self, client: str) -> Request | None:
        line = self._readline()
        while line in (b"\r\n", b"\n"):
            line = self._readline()
        if not line:
            return None
        parts = line.decode("latin-1").split()
        if len(parts) != 3:
            self._bad(400, "malformed request line")
            return None
        method, target, version = parts
        headers: dict[str, str] = {}
        while True:
            h = self._readline()
            if h in (b"\r\n", b"\n", b""):
                break
            name, _, value = h.decode("latin-1").partition(":")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        if headers.get("expect", "").lower() == "100-continue":
            self.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = self._read_body(headers)
        conn = headers.get("connection", "").lower()
        keep_alive = version == "HTTP/1.1" and "close" not in conn or "keep-alive" in conn
        split = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        return Request(
            method.upper(), unquote(split.path), query, headers, body, client, target, keep_alive
        )

    def _read_body(self, headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks = []
            total = 0
            while True:
                size = int(self._readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self._readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY:
                    raise ValueError("body too large")
                chunks.append(self.rfile.read(size))
                self._readline()
        length = int(headers.get("content-length") or 0)
        if length > MAX_BODY or length < 0:
            raise ValueError("body too large")
        return self.rfile.read(length) if length else b""

    def _bad(self, code: int, message: str) -> None:
        with contextlib.suppress(ClientGone):
            Responder(self.sock, False).send(code, message.encode(), "text/plain")


class ThreadingServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self, address: tuple[str, int], app: App, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self.app = app
        self.ssl_context = ssl_context
        self.stopping = False
        self._connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()
        super().__init__(address, _Handler)

    def track(self, sock: socket.socket, open_: bool) -> None:
        with self._conn_lock:
            if open_:
                self._connections.add(sock)
            else:
                self._connections.discard(sock)

    def close_connections(self) -> None:
        """Shut down every open client connection (idle keep-alive ones included)."""
        with self._conn_lock:
            conns = list(self._connections)
        for sock in conns:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request, client_address) -> None:  # noqa: ANN001
        log.debug("connection from %s failed", client_address, exc_info=True)
