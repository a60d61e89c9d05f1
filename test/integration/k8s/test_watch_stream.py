"""WatchStream over raw sockets: chunk boundaries, drops, and close from another thread."""

import json
import socket
import threading

import pytest

from tf_operator.k8s.client import PODS, TransportError, load_kube_client

pytestmark = pytest.mark.integration


def event(kind, name, rv):
    obj = {"kind": "Pod", "metadata": {"name": name, "namespace": "n", "resourceVersion": rv}}
    return (json.dumps({"type": kind, "object": obj}) + "\n").encode()


class RawServer:
    """Answers one HTTP request with a chunked body cut into the given pieces."""

    def __init__(self, pieces, finish=True, hold=None):
        self.pieces, self.finish, self.hold = pieces, finish, hold
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.sock.accept()
        with conn:
            buf = b""
            while b"\r\n\r\n" not in buf:
                buf += conn.recv(4096)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            for piece in self.pieces:
                conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            if self.hold is not None:
                self.hold.wait(10)
            if self.finish:
                conn.sendall(b"0\r\n\r\n")
        self.sock.close()


def split_every(data, n):
    return [data[i : i + n] for i in range(0, len(data), n)]


def open_watch(url):
    return (
        load_kube_client(master=url).resource(PODS).watch(resource_version="1", timeout_seconds=30)
    )


@pytest.mark.parametrize("piece", [1, 5, 37, 10_000])
def test_events_split_across_chunks_arbitrarily(piece):
    body = (
        event("ADDED", "a", "2") + b"\n" + event("MODIFIED", "a", "3") + event("DELETED", "a", "4")
    )
    server = RawServer(split_every(body, piece))
    events = list(open_watch(server.url))
    assert [(t, o["metadata"]["resourceVersion"]) for t, o in events] == [
        ("ADDED", "2"),
        ("MODIFIED", "3"),
        ("DELETED", "4"),
    ]


def test_error_event_is_passed_through_as_status():
    status = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
    body = (json.dumps({"type": "ERROR", "object": status}) + "\n").encode()
    events = list(open_watch(RawServer([body]).url))
    assert events == [("ERROR", status)]


def test_connection_dropped_mid_event_raises_transport_error():
    body = event("ADDED", "a", "2") + event("ADDED", "b", "3")[:20]
    stream = open_watch(RawServer([body], finish=False).url)
    seen = []
    with pytest.raises(TransportError):
        for ev in stream:
            seen.append(ev)
    assert [o["metadata"]["name"] for _, o in seen] == ["a"]


def test_close_from_another_thread_ends_iteration_quietly():
    hold = threading.Event()
    stream = open_watch(RawServer([event("ADDED", "a", "2")], hold=hold).url)
    first, done = threading.Event(), threading.Event()
    got = []

    def reader():
        for ev in stream:
            got.append(ev)
            first.set()
        done.set()

    threading.Thread(target=reader, daemon=True).start()
    assert first.wait(5)  # the reader now blocks waiting for more
    stream.close()
    assert done.wait(5)
    assert len(got) == 1
    hold.set()
    stream.close()  # idempotent
