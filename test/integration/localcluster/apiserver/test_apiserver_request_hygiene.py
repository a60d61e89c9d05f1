"""Malformed requests get the real server's Status, and no peer holds a server thread
(issue 13 #9): limit, resourceVersion and selector parameters, content types, body size,
non-JSON numbers, half-sent headers, idle keep-alive connections and the fault endpoint."""

from __future__ import annotations

import http.client
import json
import socket
import time

import pytest

from localcluster.controlplane.emulated import APIServer

pytestmark = pytest.mark.integration

CMS = "/api/v1/namespaces/default/configmaps"


def call(server: APIServer, method: str, path: str, body: bytes | None = None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        payload = resp.read()
        return resp.status, json.loads(payload) if payload else None
    finally:
        conn.close()


def post_cm(server: APIServer, name: str, **extra) -> int:
    body = json.dumps({"metadata": {"name": name}, **extra}).encode()
    return call(server, "POST", CMS, body, {"Content-Type": "application/json"})[0]


@pytest.fixture
def server():
    s = APIServer(port=0, header_timeout=0.5, idle_timeout=1.0)
    s.start()
    yield s
    s.stop()


def test_negative_limit_lists_everything_like_the_real_server(server):
    for name in ("a", "b", "c"):
        assert post_cm(server, name) == 201
    code, body = call(server, "GET", f"{CMS}?limit=-1")
    assert code == 200
    assert [i["metadata"]["name"] for i in body["items"]] == ["a", "b", "c"]
    assert "continue" not in body["metadata"]
    assert call(server, "GET", f"{CMS}?limit=x")[0] == 400
    assert call(server, "GET", f"{CMS}?limit=99999999999999999999")[0] == 400


@pytest.mark.parametrize("rv", ["abc", "-1", "1.5", "0x10", "99999999999999999999999"])
@pytest.mark.parametrize("path", [CMS, f"{CMS}?watch=true", f"{CMS}/x"])
def test_garbage_resource_versions_are_refused(server, rv, path):
    """As kube-apiserver 1.37 answers: a LIST validates its options (400, ``invalid resource
    version: ...``); a GET and a WATCH fail where the storage parses the version, a 500
    Status without a reason."""
    sep = "&" if "?" in path else "?"
    code, body = call(server, "GET", f"{path}{sep}resourceVersion={rv}")
    problem = "value out of range" if rv.isdigit() else "invalid syntax"
    why = f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing "{rv}": {problem}'
    if path == CMS:
        assert (code, body["reason"]) == (400, "BadRequest")
        assert body["message"] == f"invalid resource version: {why}"
    else:
        assert (code, body.get("reason")) == (500, None)
        assert body["message"] == why


def test_resource_version_match_rules(server):
    code, body = call(server, "GET", f"{CMS}?resourceVersionMatch=Exact")
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["message"] == (
        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    )
    assert call(server, "GET", f"{CMS}?resourceVersionMatch=Sometime&resourceVersion=1")[0] == 422
    assert (
        call(server, "GET", f"{CMS}?resourceVersionMatch=NotOlderThan&resourceVersion=1")[0] == 200
    )


def test_empty_in_selector_means_the_empty_value_as_in_kubernetes(server):
    # labels.Parse reads "a in ()" as a in (""); the real server answers 200, not 400
    assert post_cm(server, "empty", metadata={"name": "empty", "labels": {"a": ""}}) == 201
    assert post_cm(server, "full", metadata={"name": "full", "labels": {"a": "x"}}) == 201
    code, body = call(server, "GET", f"{CMS}?labelSelector=a+in+()")
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == ["empty"]
    for bad in ("a+in+(b", "a+in+b", "in+(a)", "a+in+(b)x", "a%3D%3D%3Db"):
        assert call(server, "GET", f"{CMS}?labelSelector={bad}")[0] == 400, bad


def test_greater_and_less_than_selectors_are_supported(server):
    for name, rank in (("low", "1"), ("high", "9"), ("text", "x")):
        post_cm(server, name, metadata={"name": name, "labels": {"rank": rank}})
    code, body = call(server, "GET", f"{CMS}?labelSelector=rank%3E2")
    assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == ["high"]
    code, body = call(server, "GET", f"{CMS}?labelSelector=rank%3C2")
    assert [i["metadata"]["name"] for i in body["items"]] == ["low"]
    assert call(server, "GET", f"{CMS}?labelSelector=rank%3Ex")[0] == 400


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "*/*"])
def test_unknown_body_content_types_get_415(server, ctype):
    body = json.dumps({"metadata": {"name": "c"}}).encode()
    code, status = call(server, "POST", CMS, body, {"Content-Type": ctype})
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    assert status["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )


@pytest.mark.parametrize("ctype", ["application/json", "application/apply-patch+json"])
def test_unknown_patch_content_types_get_415(server, ctype):
    """A built-in kind's patch handler answers kube-apiserver's generic 415 (a custom
    resource's names the types it takes: test_apiserver_http)."""
    assert post_cm(server, "p") == 201
    code, status = call(server, "PATCH", f"{CMS}/p", b"{}", {"Content-Type": ctype})
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    assert (status["message"], status["details"]) == ("415: Unsupported Media Type", {})


def test_missing_content_type_means_json_and_yaml_is_accepted(server):
    assert call(server, "POST", CMS, json.dumps({"metadata": {"name": "j"}}).encode())[0] == 201
    yaml_body = b"metadata:\n  name: from-yaml\n"
    assert call(server, "POST", CMS, yaml_body, {"Content-Type": "application/yaml"})[0] == 201


def test_bodies_above_3_mib_get_413(server):
    big = json.dumps({"metadata": {"name": "big"}, "data": {"k": "x" * (3 * 1024 * 1024)}})
    code, status = call(server, "POST", CMS, big.encode(), {"Content-Type": "application/json"})
    assert (code, status["reason"]) == (413, "RequestEntityTooLarge")
    assert status["message"] == "Request entity too large: limit is 3145728"
    assert call(server, "GET", "/version")[0] == 200


def test_non_json_numbers_are_rejected(server):
    raw = b'{"metadata": {"name": "nan"}, "data": {"k": NaN}}'
    code, status = call(server, "POST", CMS, raw, {"Content-Type": "application/json"})
    assert (code, status["reason"]) == (400, "BadRequest")


def _open(server: APIServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the server closes ``sock`` (EOF) within ``seconds``."""
    deadline = time.monotonic() + seconds
    sock.settimeout(0.1)
    while time.monotonic() < deadline:
        try:
            if sock.recv(65536) == b"":
                return True
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True
    return False


def test_half_sent_headers_do_not_hold_a_thread(server):
    sock = _open(server)
    sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n")  # never finishes the headers
    assert _closed_within(sock, 5)
    sock.close()


def test_trickled_headers_are_bounded_by_the_header_deadline(server):
    sock = _open(server)
    sock.sendall(b"GET /version HTTP/1.1\r\n")
    started = time.monotonic()
    closed = False
    while time.monotonic() - started < 5:
        try:
            sock.sendall(b"X")  # one byte at a time, each well inside a per-read timeout
        except OSError:
            closed = True
            break
        if _closed_within(sock, 0.1):
            closed = True
            break
    assert closed
    sock.close()


def test_idle_keep_alive_connections_are_closed(server):
    sock = _open(server)
    sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    assert data.startswith(b"HTTP/1.1 200")
    assert _closed_within(sock, 5)  # idle_timeout is 1 s here
    sock.close()


@pytest.mark.parametrize(
    "settings",
    [
        b'{"latency_ms": Infinity}',
        b'{"latency_ms": 1e309}',
        b'{"latency_ms": -5}',
        b'{"latency_ms": 600001}',
        b'{"error_rate": -0.1}',
        b'{"error_rate": NaN}',
        b'{"error_rate": true}',
        b'{"error_code": 418}',
        b'{"retry_after": -1}',
        b'{"retry_after": "soon"}',
        b'{"drop_watches": "yes"}',
        b'{"bogus": 1}',
        b"[1]",
    ],
)
def test_fault_settings_are_validated(server, settings):
    code, status = call(server, "POST", "/_localcluster/faults", settings)
    assert (code, status["kind"], status["reason"]) == (400, "Status", "BadRequest")
    code, current = call(server, "GET", "/_localcluster/faults")
    assert current["latency_ms"] == 0 and current["error_rate"] == 0
    assert call(server, "GET", "/version")[0] == 200


def _nested(name: str, depth: int) -> bytes:
    nest = '{"a":' * depth + "1" + "}" * depth
    head = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    return (head[:-1] + ',"x":' + nest + "}").encode()


@pytest.mark.parametrize("depth", [300, 600, 900])
def test_deeply_nested_bodies_are_stored_and_served(server, depth):
    """Issue 27, Low: 600-900 levels of nesting got a 500 (recursive copies and encoders);
    kube-apiserver takes objects nested up to 10,000 levels (test_apiserver_hostile_bodies)."""
    code, created = call(
        server, "POST", "/api/v1/namespaces/default/configmaps", _nested(f"n{depth}", depth)
    )
    assert code == 201, created
    code, read = call(server, "GET", f"/api/v1/namespaces/default/configmaps/n{depth}")
    assert code == 200 and read["metadata"]["name"] == f"n{depth}"
    code, listed = call(server, "GET", "/api/v1/namespaces/default/configmaps")
    assert code == 200
