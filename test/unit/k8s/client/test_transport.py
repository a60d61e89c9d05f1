"""The lean HTTP/1.1 exchange (k8s/client/transport.py) against scripted raw answers."""

import socket
import threading

import pytest

from tf_operator.k8s.client import ClientConfig, HttpTransport, Timeout, TransportError
from tf_operator.k8s.client.config import bearer


class ScriptedServer:
    """Accepts connections; for each request read, sends the next scripted answer.

    An answer of None closes the connection instead (after reading the request)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while self.answers:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn):
        buf = b""
        with conn:
            while self.answers:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, rest = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                while len(rest) < length:
                    rest += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + rest[:length])
                buf = rest[length:]
                answer = self.answers.pop(0)
                if answer is None:
                    return
                conn.sendall(answer)

    def transport(self):
        cfg = ClientConfig(host=f"http://127.0.0.1:{self.port}/prefix/", auth=bearer("tok"))
        return HttpTransport(cfg, "test/1")


class OneShotServer(ScriptedServer):
    """Reads one request, sends ``answer``, closes the connection."""

    def __init__(self, answer):
        super().__init__([answer, None])

    def _talk(self, conn):
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                data = conn.recv(65536)
                if not data:
                    return
                request += data
            conn.sendall(self.answers.pop(0))


def test_content_length_and_chunked_bodies_on_one_kept_alive_connection():
    server = ScriptedServer(
        [
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nRetry-After: 3\r\n\r\n{}",
            b"HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n"
            b'3;ext=1\r\n{"a\r\n5\r\n": 1}\r\n0\r\nX-Trailer: y\r\n\r\n',
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
        ]
    )
    t = server.transport()
    status, headers, body = t.send("GET", "/api/v1/pods", {"limit": 5, "continue": None})
    assert (status, body) == (200, b"{}")
    assert headers.get("retry-after") == "3" and headers.get("Retry-After") == "3"
    assert t.send("POST", "/api/v1/pods", body=b'{"x":1}')[:3:2] == (201, b'{"a": 1}')
    assert t.send("DELETE", "/x")[0] == 204
    assert server.connections == 1
    first, second, _ = server.requests
    assert first.startswith(b"GET /prefix/api/v1/pods?limit=5 HTTP/1.1\r\n")
    assert b"\r\nAuthorization: Bearer tok\r\n" in first
    assert b"\r\nUser-Agent: test/1\r\n" in first and b"\r\nHost: 127.0.0.1:" in first
    assert b'Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{"x":1}' in second


def test_a_connection_closed_while_idle_is_replaced_and_the_request_sent_again():
    server = ScriptedServer(
        [
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na",
            None,  # the server drops the idle connection when the next request arrives
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb",
        ]
    )
    t = server.transport()
    assert t.send("GET", "/one")[2] == b"a"
    assert t.send("GET", "/two")[2] == b"b"
    assert server.connections == 2
    assert [r.split(b" ")[1] for r in server.requests] == [
        b"/prefix/one",
        b"/prefix/two",
        b"/prefix/two",
    ]


def test_connection_close_and_body_until_eof():
    server = ScriptedServer(
        [
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\na",
            b"HTTP/1.0 200 OK\r\n\r\nuntil the end",
        ]
    )
    t = server.transport()
    assert t.send("GET", "/a")[2] == b"a"
    assert t.send("GET", "/b")[2] == b"until the end"
    assert server.connections == 2


def test_a_fresh_connection_that_breaks_is_a_transport_error():
    server = ScriptedServer([None])
    with pytest.raises(TransportError):
        server.transport().send("GET", "/x")
    junk = ScriptedServer([b"SMTP ready\r\n\r\n"])
    with pytest.raises(TransportError, match="SMTP"):
        junk.transport().send("GET", "/x")


def test_an_answer_that_never_comes_times_out_by_the_kernel_timeout():
    # The request is read but never answered: the blocking socket's SO_RCVTIMEO ends the wait.
    silent = socket.create_server(("127.0.0.1", 0))
    accepted = []
    threading.Thread(target=lambda: accepted.append(silent.accept()), daemon=True).start()
    cfg = ClientConfig(host=f"http://127.0.0.1:{silent.getsockname()[1]}")
    transport = HttpTransport(cfg, "test/1")
    with pytest.raises(TransportError, match="no answer within 0.2 s"):
        transport.send("GET", "/slow", timeout=Timeout(connect=5.0, read=0.2))
    silent.close()


def test_timeouts_microseconds_apart_leave_the_socket_alone(monkeypatch):
    # A read timeout cut to what is left of a deadline differs by microseconds between
    # requests; the socket's kernel timeout (three system calls) changes only by the ms.
    from tf_operator.k8s.client import transport as module

    changes = []
    real = module.set_kernel_timeout
    monkeypatch.setattr(
        module, "set_kernel_timeout", lambda sock, s: (changes.append(s), real(sock, s))
    )
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    server = ScriptedServer([ok] * 4)
    t = server.transport()
    for read in (59.9999931, 59.9999874, 59.9999902, 4.35):
        assert t.send("GET", "/a", timeout=Timeout(connect=5.0, read=read))[2] == b"ok"
    assert server.connections == 1
    assert changes == [5.0, 59.999, 4.35]  # on connecting, then the first read and the last


def test_answers_larger_than_one_receive_buffer_arrive_whole():
    body = bytes(range(256)) * 1024  # 256 KiB: several reads into the connection's buffer
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    server = ScriptedServer([head + body, head + body])
    t = server.transport()
    assert t.send("GET", "/big")[2] == body
    assert t.send("GET", "/big")[2] == body
    assert server.connections == 1


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n",
        b"HTTP/1.0 200 OK\r\n\r\nhello world",
    ],
    ids=["content-length", "chunked", "until-eof"],
)
def test_a_streamed_body_is_read_whole_whatever_its_framing(answer):
    server = OneShotServer(answer)
    status, headers, response = server.transport().stream("GET", "/log", None, None)
    assert status == 200
    assert response.read(3) == b"hel"
    assert response.read() == b"lo world"
    assert response.read1() == b""
    response.close()


def test_a_streamed_error_answer_comes_back_with_its_body():
    answer = b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"
    server = ScriptedServer([answer])
    status, _, body = server.transport().stream("GET", "/gone", None, None)
    assert (status, body) == (404, b"not found")
