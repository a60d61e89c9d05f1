"""HTTP/1.1 to the API server over kept-alive connections, with nothing per request but
the request.

What the official client did on every request (look up proxy settings in the environment,
build the auth settings, normalise a pool key, parse the URL, copy header dicts, build a
``Retry``, parse the answer's headers with the e-mail parser) is done once or not at all
here: :class:`HttpTransport` parses the server URL and builds the TLS context and the
constant header block when it is made. A request takes an idle :class:`Connection` from a
small LIFO pool (or opens one), writes the request in one piece, reads the status line, the
headers and the body (``Content-Length`` or chunked) and puts the connection back: a thread
that makes requests one after another reuses the same warm connection.

Long-lived responses (watches, log streams) get a connection of their own, read as the
answer arrives through a :class:`StreamingResponse` that owns it until closed.

Each socket stays in blocking mode with its timeouts held by the kernel (``SO_RCVTIMEO``,
``SO_SNDTIMEO``): a socket with a Python-level timeout polls before every send and receive,
which doubles the system calls per request (and each one hands the GIL over). Answers are
received into one buffer per connection, not a fresh 256 KiB ``bytes`` per read (an
``mmap``, ``mremap`` and ``munmap`` each time).

A kept-alive connection the server closed while it sat idle fails on first use; that
request is sent once more on a fresh connection (the server never saw it). Connecting is
tried ``CONNECT_ATTEMPTS`` times. Only the ``Authorization`` value is looked up per request
(a :class:`~.config.TokenSource` may rotate it).
"""

from __future__ import annotations

import contextlib
import http.client
import math
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlencode, urlsplit

from tf_operator.k8s.client.config import ClientConfig
from tf_operator.k8s.client.errors import TransportError

# Idle connections kept per transport (informers, workers, event senders and leader
# election share them; more concurrent requests than this simply open more connections).
MAX_IDLE_CONNECTIONS = 32
CONNECT_ATTEMPTS = 3
CONNECT_TIMEOUT = 30.0
_RECV = 64 * 1024
# Longest status line plus headers accepted from a server.
_MAX_HEAD = 256 * 1024


@dataclass(frozen=True)
class Timeout:
    """Seconds to connect and to wait for each read (None: wait forever)."""

    connect: float | None = CONNECT_TIMEOUT
    read: float | None = 60.0


class Headers(dict[str, str]):
    """Response headers; names compare case-insensitively (stored lower case)."""

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())


class _StaleConnectionError(Exception):
    """The server had closed this kept-alive connection before our request reached it."""


# What a blocking call on a socket with a kernel timeout raises when the time is up.
_EXPIRED = (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


def _timeval(seconds: float | None) -> bytes:
    """A ``struct timeval`` for ``SO_RCVTIMEO``/``SO_SNDTIMEO`` (zero: wait forever)."""
    if seconds is None:
        return struct.pack("ll", 0, 0)
    whole = int(seconds)
    micros = int((seconds - whole) * 1_000_000)
    return struct.pack("ll", whole, micros or (0 if whole else 1))


def set_kernel_timeout(sock: socket.socket, seconds: float | None) -> None:
    """Put ``sock`` in blocking mode with ``seconds`` as its kernel send and receive timeout;
    a blocked call then fails with ``EAGAIN`` (see :class:`Connection`)."""
    sock.settimeout(None)
    value = _timeval(seconds)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, value)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, value)


class Connection:
    """One socket speaking HTTP/1.1 request/response (not thread-safe: one user at a time).

    The socket is blocking with kernel timeouts (see the module docstring); a send or
    receive that times out raises :class:`TimeoutError`."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = bytearray()
        self._scratch = memoryview(bytearray(_RECV))
        self._timeout: float | None = sock.gettimeout()
        set_kernel_timeout(sock, self._timeout)
        self.used = False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def _recv(self) -> int:
        """Append what the socket has to the buffer; 0 at the end of the stream."""
        try:
            n = self.sock.recv_into(self._scratch)
        except _EXPIRED as err:  # SO_RCVTIMEO
            raise TimeoutError(f"no answer within {self._timeout} s") from err
        self._buf += self._scratch[:n]
        return n

    def _fill(self) -> None:
        if not self._recv():
            raise ConnectionResetError("the server closed the connection")

    def _read_until(self, marker: bytes, limit: int) -> bytes:
        start = 0
        while True:
            end = self._buf.find(marker, start)
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + len(marker)]
                return line
            if len(self._buf) > limit:
                raise http.client.LineTooLong("response header block")
            start = max(0, len(self._buf) - len(marker) + 1)
            self._fill()

    def _read_exactly(self, n: int) -> bytes:
        while len(self._buf) < n:
            self._fill()
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data

    def _read_chunked(self) -> bytes:
        body = bytearray()
        while True:
            size_line = self._read_until(b"\r\n", _MAX_HEAD)
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError as err:
                raise http.client.HTTPException(f"bad chunk size {size_line[:40]!r}") from err
            if size == 0:
                while self._read_until(b"\r\n", _MAX_HEAD):  # trailers, then an empty line
                    pass
                return bytes(body)
            body += self._read_exactly(size)
            self._read_exactly(2)

    def exchange(
        self, request: bytes, timeout: float | None, head_only: bool
    ) -> tuple[int, Headers, bytes, bool]:
        """Send one request; ``(status, headers, body, keep)`` (keep: reusable after)."""
        status, headers, keep = self.request(request, timeout)
        if head_only or status in (204, 304):
            return status, headers, b"", keep
        if headers.get("transfer-encoding", "").lower() == "chunked":
            return status, headers, self._read_chunked(), keep
        if "content-length" in headers:
            return status, headers, self._read_exactly(int(headers["content-length"])), keep
        while self._recv():  # delimited by the end of the connection
            pass
        body = bytes(self._buf)
        self._buf.clear()
        return status, headers, body, False

    def request(self, request: bytes, timeout: float | None) -> tuple[int, Headers, bool]:
        """Send one request and read the answer's head: ``(status, headers, keep)``; the
        body is left to read."""
        if timeout is not None:
            # To the millisecond, rounded down (the tiny epsilon only absorbs float error):
            # a timeout cut to what is left of a deadline differs by microseconds from one
            # request to the next, and each change costs the socket three system calls.
            timeout = math.floor(timeout * 1000 + 1e-6) / 1000
        if timeout != self._timeout:
            set_kernel_timeout(self.sock, timeout)
            self._timeout = timeout
        reused, self.used = self.used, True
        try:
            self._send(request)
            head = self._read_until(b"\r\n\r\n", _MAX_HEAD)
        except (ConnectionResetError, BrokenPipeError) as err:
            if reused and not self._buf:
                raise _StaleConnectionError(str(err)) from err
            raise
        while True:
            lines = head.split(b"\r\n")
            status_line = lines[0]
            if not status_line.startswith(b"HTTP/1.") or len(status_line) < 12:
                raise http.client.BadStatusLine(status_line[:80].decode("latin-1"))
            status = int(status_line[9:12])
            if not 100 <= status < 200:
                break
            # an interim answer (1xx): the real one follows
            head = self._read_until(b"\r\n\r\n", _MAX_HEAD)
        headers = Headers()
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if sep:
                headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
        keep = status_line[7:8] == b"1" and headers.get("connection", "").lower() != "close"
        return status, headers, keep

    def read_body_part(self, framing: _BodyFraming, limit: int) -> bytes:
        """Up to ``limit`` bytes (any number when negative) of a body being streamed, waiting
        for the server only when none are at hand; b"" once the body has ended."""
        while not framing.ended:
            part = framing.take(self._buf, limit)
            if part:
                return part
            if framing.ended:
                break
            if not self._recv():
                if framing.until_eof:
                    framing.ended = True
                    break
                raise ConnectionResetError("the server closed the connection mid-answer")
        return b""

    def _send(self, request: bytes) -> None:
        try:
            self.sock.sendall(request)
        except _EXPIRED as err:  # SO_SNDTIMEO
            raise TimeoutError(f"request not sent within {self._timeout} s") from err


class _BodyFraming:
    """Where a streamed body ends: chunked, ``Content-Length`` bytes, or the end of the
    connection; takes body bytes out of a connection's buffer as they arrive."""

    def __init__(self, headers: Headers) -> None:
        self.chunked = headers.get("transfer-encoding", "").lower() == "chunked"
        length = headers.get("content-length")
        self.until_eof = not self.chunked and length is None
        self.left = 0 if self.chunked or length is None else int(length)  # of this chunk
        self.crlf_due = False  # a chunk's data is read, the CRLF after it is not
        self.ended = not self.chunked and not self.until_eof and self.left == 0

    def take(self, buf: bytearray, limit: int) -> bytes:
        """Body bytes at the front of ``buf`` (removed from it), at most ``limit`` (any
        number when negative); b"" when more must be received first."""
        if self.until_eof:
            n = len(buf) if limit < 0 else min(limit, len(buf))
        elif not self.chunked:
            n = min(self.left, len(buf)) if limit < 0 else min(self.left, len(buf), limit)
            self.left -= n
            self.ended = self.left == 0
        else:
            return self._take_chunks(buf, limit)
        data = bytes(buf[:n])
        del buf[:n]
        return data

    def _take_chunks(self, buf: bytearray, limit: int) -> bytes:
        out = bytearray()
        while limit < 0 or len(out) < limit:
            if self.crlf_due:
                if len(buf) < 2:
                    break
                del buf[:2]
                self.crlf_due = False
            if self.left == 0:
                end = buf.find(b"\r\n")
                if end < 0:
                    if len(buf) > _MAX_HEAD:
                        raise http.client.LineTooLong("chunk size")
                    break
                try:
                    size = int(bytes(buf[:end]).split(b";", 1)[0].strip(), 16)
                except ValueError as err:
                    raise http.client.HTTPException(f"bad chunk size {buf[:40]!r}") from err
                del buf[: end + 2]
                if size == 0:  # the last chunk (trailers are not read: the stream is done)
                    self.ended = True
                    break
                self.left = size
            n = (
                min(self.left, len(buf))
                if limit < 0
                else min(self.left, len(buf), limit - len(out))
            )
            if n == 0:
                break
            out += buf[:n]
            del buf[:n]
            self.left -= n
            self.crlf_due = self.left == 0
        return bytes(out)


class StreamingResponse:
    """An answer read as it arrives (watches, logs); owns its connection.

    ``read``/``read1`` as a file (the body, de-chunked); ``shutdown`` (any thread) wakes a
    blocked reader; ``close`` (or ``release_conn``) closes the connection."""

    def __init__(self, conn: Connection, status: int, headers: Headers) -> None:
        self._conn = conn
        self._framing = _BodyFraming(headers)
        self.status = status
        self.headers = headers

    def read1(self, amt: int = -1) -> bytes:
        """What is at hand of the body (up to ``amt`` bytes), waiting only when nothing is."""
        return self._conn.read_body_part(self._framing, amt)

    def read(self, amt: int | None = None) -> bytes:
        """``amt`` bytes of the body (fewer at its end); all of the rest when None."""
        parts = bytearray()
        while amt is None or len(parts) < amt:
            part = self.read1(-1 if amt is None else amt - len(parts))
            if not part:
                break
            parts += part
        return bytes(parts)

    def shutdown(self) -> None:
        self._conn.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
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
        self._hostname = url.hostname
        self._port = url.port or (443 if url.scheme == "https" else 80)
        self._host_header = url.netloc.rsplit("@", 1)[-1]
        self._prefix = url.path.rstrip("/")
        self._ssl = config.ssl_context() if url.scheme == "https" else None
        self._proxy: SplitResult | None = urlsplit(config.proxy_url) if config.proxy_url else None
        self._auth = config.auth
        self._fixed = (
            f"Host: {self._host_header}\r\nUser-Agent: {user_agent}\r\nAccept: application/json\r\n"
        ).encode("latin-1")
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._max_idle = max_idle
        self._closed = False

    # ---- connections -------------------------------------------------------------------

    def _server_name(self) -> str:
        return self.config.tls_server_name or self._hostname

    def _open_socket(self, timeout: float | None) -> socket.socket:
        """A connected socket (tunnelled through the proxy, TLS when https)."""
        if self._proxy is not None:
            address = (self._proxy.hostname or "", self._proxy.port or 80)
        else:
            address = (self._hostname, self._port)
        sock = socket.create_connection(address, timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._proxy is not None and self._ssl is not None:
                self._tunnel(sock, timeout)
            if self._ssl is not None:
                sock = self._ssl.wrap_socket(sock, server_hostname=self._server_name())
        except BaseException:
            sock.close()
            raise
        return sock

    def _tunnel(self, sock: socket.socket, timeout: float | None) -> None:
        target = f"{self._hostname}:{self._port}"
        conn = Connection(sock)
        request = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode("latin-1")
        status, _, _, _ = conn.exchange(request, timeout, head_only=True)
        if status != 200:
            raise OSError(f"proxy refused CONNECT {target}: HTTP {status}")

    def _connect(self, timeout: Timeout, deadline: float | None = None) -> Connection:
        """A new connection: up to ``CONNECT_ATTEMPTS`` tries, none begun after ``deadline``
        (a ``time.monotonic()`` reading) and none waiting past it."""
        attempt = 1
        while True:
            connect = timeout.connect
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TransportError(f"connecting to {self.host}: deadline exceeded")
                connect = left if connect is None else min(connect, left)
            try:
                return Connection(self._open_socket(connect))
            except OSError as err:
                if attempt >= CONNECT_ATTEMPTS:
                    raise TransportError(f"connecting to {self.host}: {err}") from err
                attempt += 1

    def _take(self) -> Connection | None:
        with self._lock:
            return self._idle.pop() if self._idle else None

    def _give_back(self, conn: Connection) -> None:
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
            target = f"http://{self._host_header}{target}"
        return target

    def _request_bytes(
        self, method: str, target: str, body: bytes | None, content_type: str | None
    ) -> bytes:
        parts = [f"{method} {target} HTTP/1.1\r\n".encode("latin-1"), self._fixed]
        auth = self._auth.authorization()
        if auth:
            parts.append(f"Authorization: {auth}\r\n".encode("latin-1"))
        if body is not None:
            parts.append(
                f"Content-Type: {content_type or 'application/json'}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode("latin-1")
            )
            parts.append(body)
        else:
            parts.append(b"\r\n")
        return b"".join(parts)

    def send(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        timeout: Timeout | None = None,
        deadline: float | None = None,
    ) -> tuple[int, Headers, bytes]:
        """Send one request and read the whole answer: ``(status, headers, body)``; a new
        connection is not tried after ``deadline`` (the caller cuts the read timeout)."""
        target = self.url(path, query)
        request = self._request_bytes(method, target, body, content_type)
        timeout = timeout or Timeout()
        while True:
            conn = self._take() or self._connect(timeout, deadline)
            try:
                status, headers, data, keep = conn.exchange(request, timeout.read, method == "HEAD")
            except _StaleConnectionError:
                conn.close()
                continue  # the server closed an idle connection: it never saw this
            except (OSError, http.client.HTTPException, ValueError) as err:
                conn.close()
                raise TransportError(f"{method} {self.host}{target}: {err}") from err
            if keep:
                self._give_back(conn)
            else:
                conn.close()
            return status, headers, data

    def stream(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None,
        timeout: Timeout | None,
        deadline: float | None = None,
    ) -> tuple[int, Any, bytes | StreamingResponse]:
        """Send a request whose answer is read as it arrives, on a connection of its own; a
        2xx answer comes back as a :class:`StreamingResponse`, any other with its body."""
        target = self.url(path, query)
        timeout = timeout or Timeout()
        conn = self._connect(timeout, deadline)
        try:
            status, headers, _ = conn.request(
                self._request_bytes(method, target, None, None), timeout.read
            )
            if status < 300:
                return status, headers, StreamingResponse(conn, status, headers)
            data = StreamingResponse(conn, status, headers).read()
        except (OSError, http.client.HTTPException, ValueError, _StaleConnectionError) as err:
            conn.close()
            raise TransportError(f"{method} {self.host}{target}: {err}") from err
        conn.close()
        return status, headers, data
