"""The HTTP layer, spoken to directly: error shapes, malformed input, discovery negotiation,
OpenAPI, Tables, watch framing (410, bookmarks, timeout), logs, faults, TLS with a token."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time

import pytest

from localcluster.controlplane.emulated import APIServer

pytestmark = pytest.mark.integration

AGG_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


class Client:
    def __init__(self, server: APIServer, context: ssl.SSLContext | None = None) -> None:
        if context is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        else:
            self.conn = http.client.HTTPSConnection(
                "127.0.0.1", server.port, timeout=10, context=context
            )

    def request(
        self,
        method: str,
        path: str,
        body=None,
        headers: dict | None = None,
        raw: bytes | None = None,
    ):
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        self.conn.request(method, path, body=data, headers=hdrs)
        resp = self.conn.getresponse()
        payload = resp.read()
        ctype = resp.getheader("Content-Type")
        parsed = (
            json.loads(payload)
            if ctype and ctype.startswith("application/json") and payload
            else payload
        )
        return resp.status, ctype, parsed, resp


@pytest.fixture
def c(apiserver):
    client = Client(apiserver)
    yield client
    client.conn.close()


def stream_lines(
    server: APIServer, path: str, headers: dict | None = None, limit: int = 100, timeout: float = 10
) -> list[dict]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    conn.request("GET", path, headers=headers or {})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Transfer-Encoding") == "chunked"
    out = []
    while len(out) < limit:
        line = resp.readline()
        if not line:
            break
        out.append(json.loads(line))
    conn.close()
    return out


def assert_status(body: dict, code: int, reason: str) -> None:
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure"
    assert body["code"] == code and body["reason"] == reason and body["message"]


def test_error_statuses(c):
    code, ctype, body, _ = c.request("GET", "/api/v1/namespaces/default/pods/nope")
    assert (code, ctype) == (404, "application/json")
    assert_status(body, 404, "NotFound")
    assert body["details"] == {"name": "nope", "kind": "pods"}
    code, _, body, _ = c.request("GET", "/apis/apps/v1/things")
    assert_status(body, 404, "NotFound")
    assert body["message"] == "the server could not find the requested resource"
    # a group no built-in handler serves reaches kube-apiserver's last handler
    code, ctype, body, _ = c.request("GET", "/apis/nope.io/v1/things")
    assert (code, ctype, body) == (404, "text/plain; charset=utf-8", b"404 page not found\n")
    code, _, body, _ = c.request("PUT", "/api/v1/namespaces/default/pods")
    assert_status(body, 405, "MethodNotAllowed")
    code, _, body, _ = c.request("POST", "/api/v1/namespaces/default/configmaps", raw=b"{not json")
    assert_status(body, 400, "BadRequest")
    code, _, body, _ = c.request(
        "POST", "/api/v1/namespaces/default/configmaps", {"kind": "Pod", "metadata": {"name": "x"}}
    )
    assert_status(body, 400, "BadRequest")
    code, _, body, _ = c.request(
        "PUT", "/api/v1/namespaces/default/configmaps/a", {"metadata": {"name": "b"}}
    )
    assert_status(body, 400, "BadRequest")
    code, _, body, _ = c.request(
        "POST",
        "/api/v1/namespaces/default/pods",
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}},
    )
    assert_status(body, 422, "Invalid")
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value",
            "field": "spec.containers[0].image",
        }
    ]
    assert body["message"] == 'Pod "p" is invalid: spec.containers[0].image: Required value'
    c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    code, _, body, _ = c.request(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/a",
        {"data": {}},
        {"Content-Type": "text/plain"},
    )
    assert_status(body, 415, "UnsupportedMediaType")
    code, _, body, _ = c.request(
        "POST", "/api/v1/namespaces/ghost/configmaps", {"metadata": {"name": "a"}}
    )
    assert_status(body, 404, "NotFound")
    code, _, body, _ = c.request("GET", "/api/v1/namespaces/default/pods?labelSelector=a+in+(b")
    assert_status(body, 400, "BadRequest")
    code, _, body, _ = c.request("GET", "/api/v1/namespaces/default/namespaces")
    assert code == 404
    # the connection survives every error above
    assert c.request("GET", "/version")[0] == 200


def test_malformed_http_is_answered_not_hung(apiserver):
    import socket

    with socket.create_connection(("127.0.0.1", apiserver.port), timeout=5) as s:
        s.sendall(b"GARBAGE\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 400")


def test_version_and_discovery_negotiation(c):
    assert c.request("GET", "/version?timeout=5s")[2]["gitVersion"].startswith("v1.32.")
    code, ctype, body, _ = c.request("GET", "/apis", headers={"Accept": AGG_ACCEPT})
    assert ctype == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert body["apiVersion"] == "apidiscovery.k8s.io/v2"
    groups = {i["metadata"]["name"]: i for i in body["items"]}
    assert [v["version"] for v in groups["policy"]["versions"]] == ["v1", "v1beta1"]
    v1beta1 = (
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
    )
    code, ctype, body, _ = c.request("GET", "/api", headers={"Accept": v1beta1})
    assert (
        ctype.endswith("v=v2beta1;as=APIGroupDiscoveryList") and body["items"][0]["metadata"] == {}
    )
    assert c.request("GET", "/api")[2]["kind"] == "APIVersions"
    assert c.request("GET", "/apis")[2]["kind"] == "APIGroupList"
    assert c.request("GET", "/apis/apps")[2]["preferredVersion"]["version"] == "v1"
    resources = c.request("GET", "/api/v1")[2]["resources"]
    names = {r["name"] for r in resources}
    assert {
        "pods",
        "pods/status",
        "pods/log",
        "pods/binding",
        "services/status",
        "namespaces",
    } <= names


def test_openapi(c):
    assert c.request("GET", "/openapi/v2")[0] == 404
    index = c.request("GET", "/openapi/v3")[2]["paths"]
    url = index["api/v1"]["serverRelativeURL"]
    assert "?hash=" in url
    doc = c.request("GET", url)[2]
    item = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]
    assert item["patch"]["x-kubernetes-group-version-kind"] == {
        "group": "",
        "version": "v1",
        "kind": "Pod",
    }
    assert "fieldValidation" in [p["name"] for p in item["patch"]["parameters"]]


def test_tables_for_list_get_and_crd_columns(c):
    c.request(
        "POST",
        "/api/v1/namespaces/default/services",
        {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}], "selector": {"a": "b"}}},
    )
    code, ctype, body, _ = c.request(
        "GET", "/api/v1/namespaces/default/services?limit=500", headers={"Accept": TABLE_ACCEPT}
    )
    assert ctype == "application/json;as=Table;v=v1;g=meta.k8s.io"
    assert [d["name"] for d in body["columnDefinitions"]][:5] == [
        "Name",
        "Type",
        "Cluster-IP",
        "External-IP",
        "Port(s)",
    ]
    cells = body["rows"][0]["cells"]
    assert cells[0] == "s" and cells[4] == "80/TCP"
    assert body["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    body = c.request(
        "GET", "/api/v1/namespaces/default/services/s", headers={"Accept": TABLE_ACCEPT}
    )[2]
    assert body["kind"] == "Table" and len(body["rows"]) == 1


def test_watch_framing_410_and_bookmarks(apiserver, c):
    reg = apiserver.registry
    rv = c.request("GET", "/api/v1/namespaces/default/configmaps")[2]["metadata"]["resourceVersion"]
    c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    events = stream_lines(
        apiserver,
        f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=1",
    )
    assert [e["type"] for e in events] == ["ADDED"]
    assert events[0]["object"]["kind"] == "ConfigMap" and events[0]["object"]["apiVersion"] == "v1"
    events = stream_lines(
        apiserver,
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=2&allowWatchBookmarks=true",
        limit=2,
    )
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["resourceVersion"] == str(reg.resource_version)
    started = time.monotonic()
    assert (
        stream_lines(
            apiserver,
            f"/api/v1/configmaps?watch=true&resourceVersion={reg.resource_version}&timeoutSeconds=1",
        )
        == []
    )
    assert time.monotonic() - started < 5
    reg.compact()
    c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "b"}})
    events = stream_lines(
        apiserver, f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}"
    )
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    assert_status(events[0]["object"], 410, "Expired")


def test_watch_table_events(apiserver, c):
    c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
    events = stream_lines(
        apiserver,
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
        {"Accept": TABLE_ACCEPT},
        limit=1,
    )
    assert (
        events[0]["object"]["kind"] == "Table" and events[0]["object"]["rows"][0]["cells"][0] == "a"
    )


def test_pagination_over_http(c):
    for i in range(5):
        c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": f"c{i}"}})
    body = c.request("GET", "/api/v1/namespaces/default/configmaps?limit=2")[2]
    assert len(body["items"]) == 2 and body["metadata"]["remainingItemCount"] == 3
    token = body["metadata"]["continue"]
    body = c.request("GET", f"/api/v1/namespaces/default/configmaps?limit=2&continue={token}")[2]
    assert [i["metadata"]["name"] for i in body["items"]] == ["c2", "c3"]
    body = c.request("GET", "/api/v1/namespaces/default/configmaps?limit=2&resourceVersion=0")[2]
    assert len(body["items"]) == 5 and "continue" not in body["metadata"]


def test_pages_keep_their_list_rv_and_an_expired_token_offers_the_rest(c):
    for i in range(4):
        c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": f"p{i}"}})
    first = c.request("GET", "/api/v1/namespaces/default/configmaps?limit=1")[2]["metadata"]
    c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "p00"}})
    second = c.request(
        "GET", f"/api/v1/namespaces/default/configmaps?limit=1&continue={first['continue']}"
    )[2]
    assert [i["metadata"]["name"] for i in second["items"]] == ["p1"]  # p00 came later
    assert second["metadata"]["resourceVersion"] == first["resourceVersion"]
    code, _, body, _ = c.request(
        "GET",
        f"/api/v1/namespaces/default/configmaps?limit=1&continue={first['continue']}"
        f"&resourceVersion={first['resourceVersion']}",
    )
    assert_status(body, 400, "BadRequest")
    c.request("POST", "/_localcluster/faults", {"compact": True})
    code, _, body, _ = c.request(
        "GET", f"/api/v1/namespaces/default/configmaps?limit=10&continue={first['continue']}"
    )
    assert_status(body, 410, "Expired")
    rest = c.request(
        "GET", f"/api/v1/namespaces/default/configmaps?continue={body['metadata']['continue']}"
    )[2]
    assert [i["metadata"]["name"] for i in rest["items"]] == ["p00", "p1", "p2", "p3"]


def test_delete_options_body_query_and_none(apiserver, c):
    for name in ("a", "b", "c"):
        c.request(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {"metadata": {"name": name, "labels": {"k": "v"}}},
        )
    assert (
        c.request(
            "DELETE", "/api/v1/namespaces/default/configmaps/a", {"propagationPolicy": "Background"}
        )[0]
        == 200
    )
    assert (
        c.request(
            "DELETE",
            "/api/v1/namespaces/default/configmaps/b?gracePeriodSeconds=0&propagationPolicy=Foreground",
        )[0]
        == 200
    )
    assert (
        c.request(
            "DELETE", "/api/v1/namespaces/default/configmaps/c", headers={"Content-Type": ""}
        )[0]
        == 200
    )
    code, _, body, _ = c.request("DELETE", "/api/v1/namespaces/default/configmaps/c")
    assert_status(body, 404, "NotFound")
    c.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        {"metadata": {"name": "d", "labels": {"k": "v"}}},
    )
    body = c.request("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=k%3Dv")[2]
    assert body["kind"] == "ConfigMapList" and [i["metadata"]["name"] for i in body["items"]] == [
        "d"
    ]


def test_status_subresource_and_binding_over_http(c):
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    c.request("POST", "/api/v1/namespaces/default/pods", pod)
    code, _, body, _ = c.request(
        "PATCH",
        "/api/v1/namespaces/default/pods/p/status",
        {"status": {"phase": "Running"}, "spec": {"nodeName": "x"}},
        {"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert code == 200 and body["status"]["phase"] == "Running" and "nodeName" not in body["spec"]
    code, _, body, _ = c.request(
        "POST",
        "/api/v1/namespaces/default/pods/p/binding",
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "p"},
            "target": {"name": "n1"},
        },
    )
    assert code == 201
    assert c.request("GET", "/api/v1/namespaces/default/pods/p")[2]["spec"]["nodeName"] == "n1"
    code, _, body, _ = c.request(
        "PATCH",
        "/api/v1/namespaces/default/pods/p",
        {"metadata": {}},
        {"Content-Type": "application/apply-patch+yaml"},
    )
    # no fieldManager: kube-apiserver refuses the PatchOptions as invalid
    assert_status(body, 422, "Invalid")
    assert body["details"]["kind"] == "PatchOptions"
    code, _, body, _ = c.request(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/new?fieldManager=me",
        raw=b"data:\n  a: '1'\n",
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert code == 201 and body["data"] == {"a": "1"}


def test_pod_logs(apiserver, c):
    calls = []

    def provider(
        namespace, pod, container, follow, tail_lines, limit_bytes, timestamps, previous, stop_event
    ):
        calls.append((namespace, pod, container, follow, tail_lines))
        yield b"line 1\n"
        yield b"line 2\n"

    apiserver.register_log_provider(provider)
    two = {
        "metadata": {"name": "two"},
        "spec": {"containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]},
    }
    c.request("POST", "/api/v1/namespaces/default/pods", two)
    code, _, body, _ = c.request("GET", "/api/v1/namespaces/default/pods/two/log")
    assert_status(body, 400, "BadRequest")
    assert "choose one of: [a b]" in body["message"]
    code, ctype, body, _ = c.request(
        "GET", "/api/v1/namespaces/default/pods/two/log?container=b&tailLines=2"
    )
    assert (code, ctype, body) == (200, "text/plain", b"line 1\nline 2\n")
    assert calls[-1] == ("default", "two", "b", False, 2)
    assert c.request("GET", "/api/v1/namespaces/default/pods/two/log?container=zz")[0] == 400
    assert c.request("GET", "/api/v1/namespaces/default/pods/none/log")[0] == 404
    conn = http.client.HTTPConnection("127.0.0.1", apiserver.port, timeout=5)
    conn.request(
        "GET", "/api/v1/namespaces/default/pods/two/log?container=a&follow=true&limitBytes=9"
    )
    resp = conn.getresponse()
    assert resp.getheader("Transfer-Encoding") == "chunked" and resp.read() == b"line 1\nli"


def test_faults_endpoint(apiserver, c):
    code, _, body, _ = c.request(
        "POST", "/_localcluster/faults", {"error_rate": 1.0, "error_code": 429, "retry_after": 2}
    )
    assert code == 200 and body["error_rate"] == 1.0
    code, _, body, resp = c.request("GET", "/api/v1/namespaces")
    assert code == 429 and resp.getheader("Retry-After") == "2"
    assert_status(body, 429, "TooManyRequests")
    c.request("POST", "/_localcluster/faults", {"error_rate": 1.0, "error_code": 500})
    assert_status(c.request("GET", "/api/v1/namespaces")[2], 500, "InternalError")
    assert c.request("GET", "/_localcluster/faults")[2]["injected"] == 2
    c.request("POST", "/_localcluster/faults", {"error_rate": 0})
    assert c.request("GET", "/api/v1/namespaces")[0] == 200
    assert c.request("POST", "/_localcluster/faults", {"bogus": 1})[0] == 400

    got: list = []
    old_rv = apiserver.registry.resource_version
    c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "before"}})
    rv = apiserver.registry.resource_version
    t = threading.Thread(
        target=lambda: got.extend(
            stream_lines(apiserver, f"/api/v1/configmaps?watch=true&resourceVersion={rv}")
        )
    )
    t.start()
    deadline = time.monotonic() + 30
    while not apiserver.registry.watch_count() and time.monotonic() < deadline:
        time.sleep(0.02)  # polling interval while the watch registers
    body = c.request("POST", "/_localcluster/faults", {"drop_watches": True, "compact": True})[2]
    assert body["dropped_watches"] == 1
    t.join(5)
    assert not t.is_alive() and got == []
    c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "after"}})
    events = stream_lines(apiserver, f"/api/v1/configmaps?watch=true&resourceVersion={old_rv}")
    assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410


def test_faults_can_target_one_users_requests_of_one_path(apiserver, c):
    """``match`` narrows the injected errors, e.g. to a leader's renewals of its lock."""
    lock = "/api/v1/namespaces/default/configmaps/lock"
    c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "lock"}})
    settings = {
        "error_rate": 1.0,
        "error_code": 429,
        "retry_after": 600,
        "match": {"user": "system:unsecured", "methods": ["put"], "path_prefix": lock},
    }
    body = c.request("POST", "/_localcluster/faults", settings)[2]
    assert body["match"] == {"user": "system:unsecured", "methods": ["PUT"], "path_prefix": lock}
    code, _, _, resp = c.request("PUT", lock, {"metadata": {"name": "lock"}})
    assert code == 429 and resp.getheader("Retry-After") == "600"
    assert c.request("GET", lock)[0] == 200
    assert c.request("GET", "/api/v1/namespaces")[0] == 200
    c.request("POST", "/_localcluster/faults", {"match": {"user": "someone-else"}})
    assert c.request("PUT", lock, {"metadata": {"name": "lock"}})[0] == 200
    for bad in ({"match": {"verbs": []}}, {"match": {"methods": "PUT"}}, {"match": []}):
        assert c.request("POST", "/_localcluster/faults", bad)[0] == 400
    c.request("POST", "/_localcluster/faults", {"error_rate": 0, "match": {}})


def test_latency_fault_is_applied():
    server = APIServer(faults={"latency_ms": 100})
    server.start()
    try:
        client = Client(server)
        started = time.monotonic()
        assert client.request("GET", "/version")[0] == 200
        assert time.monotonic() - started >= 0.1
    finally:
        server.stop()


def test_tls_requires_token():
    server = APIServer(tls=True, token="s3cret")
    server.start()
    try:
        assert server.url.startswith("https://")
        ctx = ssl.create_default_context(cafile=server.cert_file)
        client = Client(server, ctx)
        code, _, body, _ = client.request("GET", "/api/v1/namespaces")
        assert_status(body, 403, "Forbidden")
        assert body["message"] == (
            'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" '
            'in API group "" at the cluster scope'
        )
        assert client.request("GET", "/version")[0] == 200  # public info stays anonymous
        assert (
            client.request("GET", "/api/v1/namespaces", headers={"Authorization": "Bearer s3cret"})[
                0
            ]
            == 200
        )
        assert (
            client.request("GET", "/version", headers={"authorization": "bearer wrong"})[0] == 401
        )
    finally:
        server.stop()


def test_kubectl_over_tls(tmp_path):
    import os
    import subprocess

    import yaml

    from localcluster.controlplane.emulated.server import kubeconfig

    if not os.path.exists("/usr/bin/kubectl"):
        pytest.skip("kubectl is not installed")
    server = APIServer(tls=True)
    server.start()
    try:
        (tmp_path / "kc").write_text(yaml.safe_dump(kubeconfig(server)))
        env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "kc")}
        out = subprocess.run(
            ["/usr/bin/kubectl", "get", "ns", "-o", "name"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        assert "namespace/default" in out.stdout
    finally:
        server.stop()


@pytest.mark.parametrize(
    "raw",
    [
        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
        b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n",
        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
)
def test_broken_framing_gets_400(apiserver, raw):
    import socket

    with socket.create_connection(("127.0.0.1", apiserver.port), timeout=5) as s:
        s.sendall(raw)
        assert s.recv(100).startswith(b"HTTP/1.1 400")


def test_stop_closes_idle_keep_alive_connections():
    server = APIServer()
    server.start()
    client = Client(server)
    assert client.request("GET", "/version")[0] == 200
    server.stop()
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        client.request("GET", "/version")


def test_watch_list_initial_events_end_bookmark(apiserver, c):
    for name in ("a", "b"):
        c.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": name}})
    q = "watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=&timeoutSeconds=1"
    events = stream_lines(apiserver, f"/api/v1/namespaces/default/configmaps?{q}", limit=3)
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    assert events[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    events = stream_lines(apiserver, f"/api/v1/namespaces/kube-system/configmaps?{q}", limit=1)
    assert events[0]["type"] == "BOOKMARK"


def test_watch_list_sends_the_initial_events_end_bookmark_once(apiserver, c):
    c.request("POST", "/api/v1/namespaces", {"metadata": {"name": "watch-list-once"}})
    for name in ("a", "b"):
        c.request(
            "POST", "/api/v1/namespaces/watch-list-once/configmaps", {"metadata": {"name": name}}
        )
    q = "watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=&timeoutSeconds=1"
    events = stream_lines(apiserver, f"/api/v1/namespaces/watch-list-once/configmaps?{q}")
    ends = [
        e
        for e in events
        if (e["object"]["metadata"].get("annotations") or {}).get("k8s.io/initial-events-end")
    ]
    assert [e["type"] for e in events[:2]] == ["ADDED", "ADDED"]
    assert len(ends) == 1 and events[2] is ends[0]


def test_expect_100_continue(apiserver):
    import socket

    body = json.dumps({"metadata": {"name": "big"}, "data": {"k": "x" * 5000}}).encode()
    head = (
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", apiserver.port), timeout=5) as s:
        s.sendall(head.encode())
        assert s.recv(100).startswith(b"HTTP/1.1 100 Continue")
        s.sendall(body)
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 201")


def test_restart_keeps_state_with_a_shared_registry():
    first = APIServer()
    first.start()
    Client(first).request(
        "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "kept"}}
    )
    registry = first.registry
    port = first.port
    first.stop()  # stops the registry it made; a new server on it starts its collector again
    second = APIServer(port=port, registry=registry)
    second.start()
    try:
        assert Client(second).request("GET", "/api/v1/namespaces/default/configmaps/kept")[0] == 200
        owner = registry.create(("", "v1", "configmaps"), "default", {"metadata": {"name": "o"}})
        ref = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "o",
            "uid": owner["metadata"]["uid"],
        }
        registry.create(
            ("", "v1", "configmaps"),
            "default",
            {"metadata": {"name": "dep", "ownerReferences": [ref]}},
        )
        registry.delete(("", "v1", "configmaps"), "default", "o")
        assert registry.gc.wait_idle()
        assert Client(second).request("GET", "/api/v1/namespaces/default/configmaps/dep")[0] == 404
    finally:
        second.stop()
        registry.stop()
