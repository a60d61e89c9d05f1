"""A lean HTTP/1.1 server: keep-alive, chunked streaming, optional TLS per connection.

``http.server`` spends most of its time in the email header parser; this reads the request line
and headers directly, hands a ``Request`` to the application callback and lets it answer through
a ``Responder`` that writes each response with one ``sendall``. One thread per connection
(clients keep connections alive, so threads are reused for many requests). TLS handshakes
happen in the connection's thread, never in the accept loop.

No peer can hold a thread forever (the timeouts of kube-apiserver's ``http.Server``): an idle
keep-alive connection closes after ``idle_timeout``; the request line and headers must arrive
within ``header_timeout`` of their first byte (at most ``MAX_HEADER_BYTES``), the body within
``body_timeout``; a reply the peer does not read for ``WRITE_TIMEOUT`` drops it. A body above
``max_body`` is not read: the request reaches the application with ``body_too_large`` set, so
it can answer 413, and the connection closes after the reply.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import select
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import parse_qs, unquote, urlsplit

log = logging.getLogger(__name__)

MAX_LINE = 65536
MAX_HEADER_BYTES = 1 << 20  # Go's http.Server MaxHeaderBytes as kube-apiserver sets it
MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's default --max-request-body-bytes (3 MiB)
MAX_DISCARD = 16 * 1024 * 1024  # how much of a refused body we read to answer it cleanly
HEADER_TIMEOUT = 32.0  # kube-apiserver's ReadHeaderTimeout
IDLE_TIMEOUT = 90.0  # kube-apiserver's IdleTimeout
BODY_TIMEOUT = 60.0
WRITE_TIMEOUT = 60.0  # a peer that stops reading a reply (or a stream) for this long is dropped
STREAM_WRITE_TIMEOUT = WRITE_TIMEOUT


class ClientGone(Exception):
    """The peer closed the connection."""


class _HeadersTooLarge(ValueError):
    """The request line and headers exceed ``MAX_HEADER_BYTES``."""


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
    extra: dict[str, Any] = field(default_factory=dict)
    body_too_large: bool = False  # the body exceeded the server's max_body and was not read

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name, default)


@functools.cache
def _status_line(code: int) -> str:
    try:
        reason = HTTPStatus(code).phrase
    except ValueError:
        reason = "Unknown"
    return f"HTTP/1.1 {code} {reason}"


class Responder:
    """Writes responses for one request on one connection."""

    def __init__(self, sock: socket.socket, keep_alive: bool) -> None:
        self._sock = sock
        self.keep_alive = keep_alive
        self.started = False
        self.status = 0
        self._chunked = False

    def _head(self, code: int, headers: list[tuple[str, str]]) -> bytes:
        lines = [_status_line(code)]
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
        # buffered, so ``peek`` and ``read1`` exist (typeshed types any buffering as IOBase)
        self.rfile = cast(io.BufferedReader, sock.makefile("rb", buffering=65536))
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
            except _HeadersTooLarge:
                self._bad(431, "request header fields too large")
                return
            except ValueError as e:  # unparsable framing: answer, then drop the connection
                self._bad(400, f"bad request: {e}")
                return
            except (OSError, ssl.SSLError):  # closed, reset, or too slow (socket timeout)
                return
            if req is None:
                return
            self.sock.settimeout(WRITE_TIMEOUT)
            resp = Responder(self.sock, req.keep_alive)
            try:
                self.server.app(req, resp)
            except ClientGone:
                return
            if not resp.keep_alive:
                return

    def _readline(self, deadline: float) -> bytes:
        """One line, within ``deadline``: each socket read waits only for what time is left, so a
        peer trickling bytes cannot stretch it (``peek`` reads the socket at most once)."""
        line = b""
        while True:
            self._wait_until(deadline)
            data = self.rfile.peek(1)
            if not data:
                return line
            end = data.find(b"\n")
            line += self.rfile.read(end + 1 if end >= 0 else len(data))
            if len(line) > MAX_LINE:
                raise ValueError("line too long")
            if end >= 0:
                return line

    def _wait_until(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("request not received in time")
        self.sock.settimeout(left)

    def _read_request(self, client: str) -> Request | None:
        self.sock.settimeout(self.server.idle_timeout)
        if not self.rfile.peek(1):  # an idle keep-alive connection: wait for the next request
            return None
        head = self._buffered_head()
        if head is None:
            head = self._read_head()
            if head is None:
                return None
        line, lines = head
        parts = line.split()
        if len(parts) != 3:
            self._bad(400, "malformed request line")
            return None
        method, target, version = parts
        headers: dict[str, str] = {}
        for h in lines:
            name, _, value = h.partition(":")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        conn = headers.get("connection", "").lower()
        keep_alive = version == "HTTP/1.1" and "close" not in conn or "keep-alive" in conn
        body, complete = self._read_body(headers)
        path, query = _split_target(target)
        return Request(
            method.upper(),
            path,
            query,
            headers,
            body,
            client,
            target,
            keep_alive and complete,
            body_too_large=not complete,
        )

    def _buffered_head(self) -> tuple[str, list[str]] | None:
        """The request line and header lines when the whole head, CRLF-terminated lines
        only, is already in the read buffer (the usual case: one segment holds it), taken from
        it in one piece; None otherwise (``_read_head`` reads it line by line)."""
        buffered = self.rfile.peek(1)
        end = buffered.find(b"\r\n\r\n")
        if end <= 0 or end + 4 > MAX_HEADER_BYTES:
            return None
        raw = buffered[:end]
        if raw.count(b"\n") != raw.count(b"\r\n") or raw.startswith(b"\r\n"):
            return None  # bare LF endings or leading blank lines: the careful reader
        self.rfile.read(end + 4)
        line, *lines = raw.decode("latin-1").split("\r\n")
        return line, lines

    def _read_head(self) -> tuple[str, list[str]] | None:
        """The request line and header lines, line by line, within the header timeout (a
        head split across reads, bare LF line endings, blank lines before it); None when the
        peer closed first."""
        deadline = time.monotonic() + self.server.header_timeout
        line = self._readline(deadline)
        while line in (b"\r\n", b"\n"):
            line = self._readline(deadline)
        if not line:
            return None
        lines: list[str] = []
        size = len(line)
        while True:
            h = self._readline(deadline)
            size += len(h)
            if size > MAX_HEADER_BYTES:
                raise _HeadersTooLarge()
            if h in (b"\r\n", b"\n", b""):
                break
            lines.append(h.decode("latin-1"))
        return line.decode("latin-1"), lines

    def _read_body(self, headers: dict[str, str]) -> tuple[bytes, bool]:
        """``(body, complete)``; a body above ``max_body`` is left unread (``complete`` False)."""
        limit = self.server.max_body
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = 0 if chunked else int(headers.get("content-length") or 0)
        if length < 0:
            raise ValueError("negative Content-Length")
        if length > limit:
            self._discard(length, time.monotonic() + self.server.body_timeout)
            return b"", False
        if (chunked or length) and headers.get("expect", "").lower() == "100-continue":
            self.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        deadline = time.monotonic() + self.server.body_timeout
        if not chunked:
            return self._read_exact(length, deadline), True
        chunks: list[bytes] = []
        total = 0
        while True:
            size = int(self._readline(deadline).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self._readline(deadline) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks), True
            total += size
            if total > limit:
                self._discard(size, deadline)
                return b"", False
            chunks.append(self._read_exact(size, deadline))
            self._readline(deadline)

    def _discard(self, n: int, deadline: float) -> None:
        """Read and drop up to ``MAX_DISCARD`` bytes of a refused body, so the peer, still
        sending, reads our reply instead of a reset; a larger body just loses the connection."""
        if n <= MAX_DISCARD:
            with contextlib.suppress(OSError):
                while n > 0:
                    self._wait_until(deadline)
                    data = self.rfile.read1(min(n, 65536))
                    if not data:
                        return
                    n -= len(data)

    def _read_exact(self, n: int, deadline: float) -> bytes:
        parts: list[bytes] = []
        while n > 0:
            self._wait_until(deadline)
            data = self.rfile.read1(min(n, 65536))
            if not data:
                raise ConnectionError("peer closed the connection mid-body")
            parts.append(data)
            n -= len(data)
        return b"".join(parts)

    def _bad(self, code: int, message: str) -> None:
        with contextlib.suppress(ClientGone, OSError):
            self.sock.settimeout(WRITE_TIMEOUT)
            Responder(self.sock, False).send(code, message.encode(), "text/plain")


def _split_target(target: str) -> tuple[str, dict[str, str]]:
    """The request target's decoded path and its query (the last value of each parameter)."""
    plain = "?" not in target and "%" not in target and "#" not in target
    if plain and target.startswith("/") and not target.startswith("//"):
        return target, {}  # nothing to split or decode
    split = urlsplit(target)
    query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
    return unquote(split.path), query


class ThreadingServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        app: App,
        ssl_context: ssl.SSLContext | None = None,
        header_timeout: float = HEADER_TIMEOUT,
        idle_timeout: float = IDLE_TIMEOUT,
        body_timeout: float = BODY_TIMEOUT,
        max_body: int = MAX_BODY,
    ) -> None:
        self.app = app
        self.ssl_context = ssl_context
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self.body_timeout = body_timeout
        self.max_body = max_body
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

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("connection from %s failed", client_address, exc_info=True)
