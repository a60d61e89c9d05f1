"""RestTransport honours Retry-After like client-go's Request.Do: 429 or 5xx with the header
is waited out and resent (at most 10 attempts); without the header, or on a watch, the error
goes straight to the caller."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tf_operator.k8s.client import PODS, ApiError, load_kube_client
from tf_operator.k8s.client.rest import MAX_RETRY_AFTER_ATTEMPTS

pytestmark = pytest.mark.integration

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}


class _Script:
    """What the stub answers: ``failures`` error answers, then success."""

    def __init__(self) -> None:
        self.failures = 0
        self.code = 429
        self.retry_after: str | None = "2"
        self.requests: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()


@pytest.fixture
def stub() -> Iterator[tuple[_Script, str]]:
    script = _Script()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with script.lock:
                script.requests.append((self.command, body))
                fail = script.failures > 0
                script.failures -= 1
            if fail:
                status = {"kind": "Status", "status": "Failure", "code": script.code}
                data = json.dumps(status).encode()
                self.send_response(script.code)
                if script.retry_after is not None:
                    self.send_header("Retry-After", script.retry_after)
            else:
                data = json.dumps(POD).encode()
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer  # noqa: N815

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield script, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _client(url: str, sleeps: list[float]):
    kc = load_kube_client(master=url)
    kc.transport.sleep = sleeps.append
    return kc


def test_429_with_retry_after_is_waited_out_and_resent(stub) -> None:
    script, url = stub
    script.failures = 2
    sleeps: list[float] = []
    pods = _client(url, sleeps).resource(PODS)
    assert pods.create(POD, namespace="default")["metadata"]["name"] == "p"
    assert sleeps == [2, 2]
    assert [m for m, _ in script.requests] == ["POST"] * 3
    assert len({body for _, body in script.requests}) == 1  # the same body each time


def test_5xx_with_retry_after_is_retried_but_not_without(stub) -> None:
    script, url = stub
    script.failures, script.code, script.retry_after = 1, 503, "0"
    sleeps: list[float] = []
    pods = _client(url, sleeps).resource(PODS)
    assert pods.get("p", namespace="default")["metadata"]["name"] == "p"
    assert sleeps == [0]
    script.failures, script.code, script.retry_after = 1, 500, None
    with pytest.raises(ApiError) as err:
        pods.get("p", namespace="default")
    assert err.value.status == 500
    assert sleeps == [0]


def test_gives_up_after_ten_attempts(stub) -> None:
    script, url = stub
    script.failures = 100
    sleeps: list[float] = []
    pods = _client(url, sleeps).resource(PODS)
    with pytest.raises(ApiError) as err:
        pods.get("p", namespace="default")
    assert err.value.status == 429 and err.value.retry_after == 2
    assert len(script.requests) == MAX_RETRY_AFTER_ATTEMPTS
    assert len(sleeps) == MAX_RETRY_AFTER_ATTEMPTS - 1


def test_watch_is_not_retried(stub) -> None:
    script, url = stub
    script.failures = 1
    sleeps: list[float] = []
    pods = _client(url, sleeps).resource(PODS)
    with pytest.raises(ApiError) as err:
        pods.watch(namespace="default", resource_version="1", timeout_seconds=1)
    assert err.value.status == 429
    assert sleeps == [] and len(script.requests) == 1
