"""RestTransport honours Retry-After like client-go's Request.Do: 429 or 5xx with the header
is waited out and resent (at most 10 attempts); without the header, or on a watch, the error
goes straight to the caller. Each wait is capped, and the request is bounded by its scope's
deadline (or the client's request timeout), cancel event and write fence, as client-go bounds
it by its context (D65)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tf_operator.k8s.client import PODS, ApiError, load_kube_client
from tf_operator.k8s.client.rest import MAX_RETRY_AFTER_ATTEMPTS, MAX_RETRY_AFTER_WAIT
from tf_operator.k8s.client.scope import (
    DeadlineExceeded,
    RequestCancelled,
    WriteFenced,
    request_scope,
)

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


def _client(url: str, sleeps: list[float], request_timeout: float | None = 60.0):
    kc = load_kube_client(master=url, request_timeout=request_timeout)

    def wait(scope, seconds: float) -> bool:
        sleeps.append(seconds)
        return scope.cancel is not None and scope.cancel.is_set()

    kc.transport.wait = wait
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


def test_a_long_retry_after_is_capped(stub) -> None:
    """``Retry-After: 600`` is asked again after the cap, not ten minutes later."""
    script, url = stub
    script.failures, script.retry_after = 1, "600"
    sleeps: list[float] = []
    pods = _client(url, sleeps).resource(PODS)
    assert pods.get("p", namespace="default")["metadata"]["name"] == "p"
    assert sleeps == [MAX_RETRY_AFTER_WAIT]


def test_a_wait_that_would_outlast_the_request_timeout_is_not_begun(stub) -> None:
    script, url = stub
    script.failures, script.retry_after = 1, "5"
    sleeps: list[float] = []
    pods = _client(url, sleeps, request_timeout=3.0).resource(PODS)
    started = time.monotonic()
    with pytest.raises(ApiError) as err:
        pods.get("p", namespace="default")
    assert err.value.status == 429 and err.value.retry_after == 5
    assert sleeps == [] and len(script.requests) == 1
    assert time.monotonic() - started < 1.0


def test_the_scope_deadline_bounds_the_waits(stub) -> None:
    """Waits fit in the caller's deadline; the one that would not is not begun."""
    script, url = stub
    script.failures, script.retry_after = 100, "1"
    sleeps: list[float] = []
    kc = _client(url, sleeps)
    real_wait = kc.transport.wait

    def wait_for_real(scope, seconds: float) -> bool:
        real_wait(scope, seconds)
        return scope.wait(seconds)

    kc.transport.wait = wait_for_real
    started = time.monotonic()
    with request_scope(timeout=2.5), pytest.raises(ApiError) as err:
        kc.resource(PODS).get("p", namespace="default")
    elapsed = time.monotonic() - started
    assert err.value.status == 429
    assert sleeps == [1, 1]  # a third 1 s wait would end after the 2.5 s deadline
    assert 2.0 <= elapsed < 3.0


def test_a_cancelled_scope_ends_the_wait_and_sends_nothing_more(stub) -> None:
    script, url = stub
    script.failures, script.retry_after = 100, "600"
    cancel = threading.Event()
    kc = load_kube_client(master=url)
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    started = time.monotonic()
    with request_scope(cancel=cancel), pytest.raises(RequestCancelled) as err:
        kc.resource(PODS).get("p", namespace="default")
    assert time.monotonic() - started < 3.0
    assert isinstance(err.value.__cause__, ApiError) and err.value.__cause__.status == 429
    assert len(script.requests) == 1
    with request_scope(cancel=cancel), pytest.raises(RequestCancelled):
        kc.resource(PODS).get("p", namespace="default")
    assert len(script.requests) == 1  # already cancelled: not sent at all


def test_an_expired_scope_sends_nothing(stub) -> None:
    script, url = stub
    kc = load_kube_client(master=url)
    with request_scope(timeout=0.0), pytest.raises(DeadlineExceeded):
        kc.resource(PODS).get("p", namespace="default")
    assert script.requests == []


def test_the_fence_is_asked_before_every_write_attempt(stub) -> None:
    """A write that waited out a Retry-After is not resent once the fence closes; reads
    are never fenced."""
    script, url = stub
    script.failures, script.retry_after = 1, "1"
    sleeps: list[float] = []
    kc = _client(url, sleeps)
    open_ = threading.Event()
    open_.set()

    def close_while_waiting(scope, seconds: float) -> bool:
        sleeps.append(seconds)
        open_.clear()
        return False

    kc.transport.wait = close_while_waiting
    with request_scope(fence=open_.is_set), pytest.raises(WriteFenced):
        kc.resource(PODS).create(POD, namespace="default")
    assert [m for m, _ in script.requests] == ["POST"]
    with request_scope(fence=open_.is_set):
        assert kc.resource(PODS).get("p", namespace="default")["metadata"]["name"] == "p"
