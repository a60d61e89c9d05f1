"""The two ``ClusterClient``s against the emulator: the same answers and the same errors
(``StatusError`` with the API's code and reason) in process and over HTTP; and what only the
HTTP client has to do itself: bookmarks kept out of the stream, a watch the server ends resumed
from its last resourceVersion, 410 Expired handed to the informer, which relists."""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Iterator

import pytest
import yaml

from localcluster.apimachinery.errors import StatusError
from localcluster.client.api import ClusterClient
from localcluster.client.http import HttpClient
from localcluster.client.informer import Informer
from localcluster.client.inprocess import InProcessClient
from localcluster.controlplane.emulated import APIServer
from localcluster.testing import wait_for

CONFIGMAPS = ("", "v1", "configmaps")
SECRETS = ("", "v1", "secrets")
PODS = ("", "v1", "pods")
NODES = ("", "v1", "nodes")
SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")
NAMESPACES = ("", "v1", "namespaces")


@pytest.fixture
def server() -> Iterator[APIServer]:
    srv = APIServer(bookmark_interval=0.1)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(params=["in-process", "http"])
def client(request: pytest.FixtureRequest, server: APIServer) -> Iterator[ClusterClient]:
    if request.param == "http":
        http = HttpClient(server.url, token=server.admin_token)
        yield http
        http.close()
    else:
        yield InProcessClient(server.registry, server.auth.tokens)


def configmap(name: str, **data: str) -> dict:
    return {"metadata": {"name": name}, "data": dict(data)}


def pod(name: str) -> dict:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x"}]}}


def error_of(call) -> tuple[int, str]:
    with pytest.raises(StatusError) as info:
        call()
    return info.value.code, info.value.reason


def test_errors_carry_the_same_code_and_reason_on_both_backends(client: ClusterClient) -> None:
    assert error_of(lambda: client.get(CONFIGMAPS, "default", "absent")) == (404, "NotFound")
    created = client.create(CONFIGMAPS, "default", configmap("a", k="1"))
    assert error_of(lambda: client.create(CONFIGMAPS, "default", configmap("a"))) == (
        409,
        "AlreadyExists",
    )
    client.update(CONFIGMAPS, "default", "a", {**created, "data": {"k": "2"}})
    stale = {**created, "data": {"k": "3"}}  # still the first resourceVersion
    assert error_of(lambda: client.update(CONFIGMAPS, "default", "a", stale)) == (409, "Conflict")
    wrong_uid = {"uid": "not-the-uid"}
    assert error_of(lambda: client.delete(CONFIGMAPS, "default", "a", preconditions=wrong_uid)) == (
        409,
        "Conflict",
    )
    bad = {"metadata": {"name": "Not_A_Name"}}
    assert error_of(lambda: client.create(CONFIGMAPS, "default", bad)) == (422, "Invalid")
    client.delete(CONFIGMAPS, "default", "a", preconditions={"uid": created["metadata"]["uid"]})
    assert error_of(lambda: client.get(CONFIGMAPS, "default", "a")) == (404, "NotFound")


def test_patch_types_and_subresources(client: ClusterClient) -> None:
    client.create(CONFIGMAPS, "default", configmap("p", a="1", b="2"))
    merged = client.patch(CONFIGMAPS, "default", "p", {"data": {"a": None, "c": "3"}}, "merge")
    assert merged["data"] == {"b": "2", "c": "3"}
    ops = [{"op": "replace", "path": "/data/b", "value": "20"}]
    assert client.patch(CONFIGMAPS, "default", "p", ops, "json")["data"] == {"b": "20", "c": "3"}
    client.create(PODS, "default", pod("web"))
    patch = {"metadata": {"labels": {"app": "web"}}}
    patched = client.patch(PODS, "default", "web", patch, "strategic")
    assert patched["metadata"]["labels"] == {"app": "web"}
    status = {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    written = client.patch(PODS, "default", "web", status, "merge", subresource="status")
    assert written["status"]["conditions"][0]["type"] == "Ready"


def test_binding_assigns_once(client: ClusterClient) -> None:
    client.create(PODS, "default", pod("b"))
    bound = client.bind("default", "b", "node-1")
    assert bound["spec"]["nodeName"] == "node-1"
    scheduled = [c for c in bound["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert scheduled[0]["status"] == "True"
    assert error_of(lambda: client.bind("default", "b", "node-2")) == (409, "Conflict")


def test_list_pages_follow_continue_tokens(client: ClusterClient) -> None:
    for i in range(5):
        client.create(CONFIGMAPS, "default", configmap(f"cm-{i}"))
    names, token, pages = [], None, 0
    while True:
        page = client.list(CONFIGMAPS, "default", limit=2, continue_token=token)
        names += [o["metadata"]["name"] for o in page.items]
        pages += 1
        token = page.continue_token
        if token is None:
            break
    assert names == [f"cm-{i}" for i in range(5)] and pages == 3
    assert (
        client.list(CONFIGMAPS, "default", field_selector="metadata.name=cm-3").items[0][
            "metadata"
        ]["name"]
        == "cm-3"
    )


def test_discovery_and_tokens(client: ClusterClient) -> None:
    pods = client.resource_info(PODS)
    assert pods.namespaced and {"status", "binding"} <= pods.subresources
    assert not client.resource_info(NODES).namespaced
    assert error_of(lambda: client.resource_info(("example.com", "v1", "widgets")))[0] == 404
    client.create(SERVICE_ACCOUNTS, "default", {"metadata": {"name": "bot"}})
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"audiences": [], "expirationSeconds": 3600},
    }
    answer = client.create_token("default", "bot", request)
    assert answer["status"]["token"].count(".") == 2  # a JWT
    assert error_of(lambda: client.create_token("default", "nobody", request))[0] == 404


def test_a_private_copy_unless_shared(client: ClusterClient) -> None:
    client.create(CONFIGMAPS, "default", configmap("c", k="1"))
    mine = client.get(CONFIGMAPS, "default", "c")
    mine["data"]["k"] = "changed"
    assert client.get(CONFIGMAPS, "default", "c")["data"] == {"k": "1"}


def test_an_unreachable_server_is_a_503() -> None:
    http = HttpClient("http://127.0.0.1:1", timeout=2)
    code, reason = error_of(lambda: http.get(CONFIGMAPS, "default", "x"))
    assert (code, reason) == (503, "ServiceUnavailable")


def test_tls_needs_the_ca_and_credentials() -> None:
    srv = APIServer(tls=True)
    srv.start()
    try:
        assert srv.cert_file is not None
        good = HttpClient(srv.url, token=srv.admin_token, ca_file=srv.cert_file)
        good.create(CONFIGMAPS, "default", configmap("tls"))
        assert good.get(CONFIGMAPS, "default", "tls")["metadata"]["name"] == "tls"
        anonymous = HttpClient(srv.url, ca_file=srv.cert_file)
        assert error_of(lambda: anonymous.get(CONFIGMAPS, "default", "tls")) == (
            403,
            "Forbidden",
        )
        untrusting = HttpClient(srv.url, token=srv.admin_token, timeout=5)
        assert error_of(lambda: untrusting.get(CONFIGMAPS, "default", "tls"))[0] == 503
    finally:
        srv.stop()


# -- watches over HTTP ------------------------------------------------------------------------


def http_client(server: APIServer) -> HttpClient:
    return HttpClient(server.url, token=server.admin_token)


def test_bookmarks_advance_the_watch_but_never_reach_the_consumer(server: APIServer) -> None:
    http = http_client(server)
    http.create(NAMESPACES, None, {"metadata": {"name": "other"}})
    start = http.list(CONFIGMAPS, "default").resource_version
    watch = http.watch(CONFIGMAPS, "default", resource_version=start)
    try:  # a change the watch filters out (another namespace) moves its bookmarks on
        other = http.create(CONFIGMAPS, "other", configmap("elsewhere"))
        latest = other["metadata"]["resourceVersion"]
        wait_for(lambda: watch.resource_version == latest, 10, what="a bookmark at the new RV")
        assert watch.get_shared(0.3) is None and not watch.closed
        http.create(CONFIGMAPS, "default", configmap("after"))
        event = watch.get_shared(5)
        assert event is not None and event[0] == "ADDED"
        assert event[1]["metadata"]["name"] == "after"
    finally:
        watch.stop()


def test_a_watch_the_server_ends_resumes_where_it_left_off(server: APIServer) -> None:
    http = http_client(server)
    start = http.list(CONFIGMAPS, "default").resource_version
    watch = http.watch(CONFIGMAPS, "default", resource_version=start)
    try:
        http.create(CONFIGMAPS, "default", configmap("one"))
        first = watch.get_shared(5)
        assert first is not None and first[1]["metadata"]["name"] == "one"
        assert server.registry.drop_watches() >= 1
        http.create(CONFIGMAPS, "default", configmap("two"))
        http.delete(CONFIGMAPS, "default", "one")
        seen = []
        while len(seen) < 2:
            event = watch.get_shared(5)
            assert event is not None, f"stream stalled after {seen}"
            seen.append((event[0], event[1]["metadata"]["name"]))
        assert seen == [("ADDED", "two"), ("DELETED", "one")]  # nothing missed, nothing twice
        assert not watch.closed and watch.get_shared(0.2) is None
    finally:
        watch.stop()


def test_an_expired_resource_version_ends_the_watch_with_a_410_event() -> None:
    slow = APIServer(bookmark_interval=60)  # no bookmark moves the watch's RV on
    slow.start()
    try:
        http = http_client(slow)
        start = http.list(CONFIGMAPS, "default").resource_version
        watch = http.watch(CONFIGMAPS, "default", resource_version=start)
        http.create(SECRETS, "default", {"metadata": {"name": "elsewhere"}})
        slow.registry.compact()
        late = http.watch(CONFIGMAPS, "default", resource_version=start)
        slow.registry.drop_watches()  # the live watch resumes from ``start``: gone too
        for stream in (late, watch):
            event = stream.get_shared(5)
            assert event is not None and event[0] == "ERROR"
            assert event[1]["code"] == 410 and event[1]["reason"] == "Expired"
            wait_for(lambda s=stream: s.closed, 5, what="the expired watch closed")
            assert stream.get_shared(0) is None
            stream.stop()
    finally:
        slow.stop()


def test_the_informer_relists_after_a_410_over_http(caplog: pytest.LogCaptureFixture) -> None:
    srv = APIServer(bookmark_interval=60)
    srv.start()
    stop = threading.Event()
    try:
        http = http_client(srv)
        http.create(CONFIGMAPS, "default", configmap("before"))
        events: list[tuple[str, str]] = []
        informer = Informer(
            http, CONFIGMAPS, lambda t, o, _: events.append((t, o["metadata"]["name"]))
        )
        informer.start(stop)
        assert informer.wait_for_sync(10)
        http.create(SECRETS, "default", {"metadata": {"name": "elsewhere"}})
        srv.registry.compact()
        with caplog.at_level(logging.INFO, logger="localcluster.client.informer"):
            srv.registry.drop_watches()
            http.create(CONFIGMAPS, "default", configmap("after"))
            wait_for(lambda: informer.get("default/after") is not None, 10, what="relisted")
        assert any("relisting" in r.getMessage() for r in caplog.records)
        assert events.count(("ADDED", "before")) == 1  # the relist found nothing new about it
        assert ("ADDED", "after") in events
        assert sorted(o["metadata"]["name"] for o in informer.items()) == ["after", "before"]
    finally:
        stop.set()
        srv.stop()


def test_a_kubeconfig_with_inline_certificate_data(tmp_path) -> None:
    srv = APIServer(tls=True)
    srv.start()
    try:
        assert srv.cert_file is not None
        with open(srv.cert_file, "rb") as f:
            ca_data = base64.b64encode(f.read()).decode()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "here",
            "contexts": [{"name": "here", "context": {"cluster": "c", "user": "u"}}],
            "clusters": [
                {"name": "c", "cluster": {"server": srv.url, "certificate-authority-data": ca_data}}
            ],
            "users": [{"name": "u", "user": {"token": srv.admin_token}}],
        }
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        http = HttpClient.from_kubeconfig(str(path))
        http.create(CONFIGMAPS, "default", configmap("inline"))
        assert http.get(CONFIGMAPS, "default", "inline")["metadata"]["name"] == "inline"
    finally:
        srv.stop()
