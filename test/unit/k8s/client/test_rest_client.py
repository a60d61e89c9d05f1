"""The real ResourceClient over the kubernetes ApiClient, against the fake HTTP server."""

import threading

import pytest
from kubernetes.config import ConfigException

from tf_operator.k8s.client import (
    NODES,
    PODS,
    FakeKubeClient,
    Resource,
    TransportError,
    is_already_exists,
    is_conflict,
    is_not_found,
    load_kube_client,
)
from tf_operator.k8s.client.fakeserver import FakeAPIServer, kube_client_for
from tf_operator.k8s.client.kube import CONNECTION_POOL_MAXSIZE, USER_AGENT

pytestmark = pytest.mark.integration

TFJOBS = Resource("kubeflow.org", "v1", "tfjobs", "TFJob")


@pytest.fixture
def server():
    fake = FakeKubeClient()
    with FakeAPIServer(fake, [PODS, NODES, TFJOBS]) as srv:
        yield srv


@pytest.fixture
def client(server):
    kc = kube_client_for(server.url)
    yield kc
    kc.close()


def test_crud_round_trip(server, client):
    jobs = client.resource(TFJOBS)
    created = jobs.create({"metadata": {"name": "j", "namespace": "ns"}, "spec": {"a": 1}})
    assert created["metadata"]["uid"] and created["apiVersion"] == "kubeflow.org/v1"
    assert jobs.get("j", "ns")["spec"] == {"a": 1}
    created["status"] = {"phase": "x"}
    assert jobs.update_status(created)["status"] == {"phase": "x"}
    patched = jobs.patch("j", {"spec": {"b": 2}}, "ns")
    assert patched["spec"] == {"a": 1, "b": 2}
    patched = jobs.patch("j", [{"op": "remove", "path": "/spec/a"}], "ns", patch_type="json")
    assert patched["spec"] == {"b": 2}
    with pytest.raises(Exception) as info:
        jobs.update(created)
    assert is_conflict(info.value) and info.value.body["kind"] == "Status"
    with pytest.raises(Exception) as info:
        jobs.create({"metadata": {"name": "j", "namespace": "ns"}})
    assert is_already_exists(info.value)
    jobs.delete("j", "ns", propagation_policy="Foreground")
    with pytest.raises(Exception) as info:
        jobs.get("j", "ns")
    assert is_not_found(info.value)
    assert ("GET", "/apis/kubeflow.org/v1/namespaces/ns/tfjobs/j") in server.requests
    assert ("PUT", "/apis/kubeflow.org/v1/namespaces/ns/tfjobs/j/status") in server.requests


def test_list_with_selectors_and_pages(server, client):
    pods = client.resource(PODS)
    for i in range(5):
        pods.create({"metadata": {"name": f"p{i}", "namespace": "n", "labels": {"i": str(i)}}})
    result = pods.list("n", label_selector="i in (1,3)")
    assert [p["metadata"]["name"] for p in result["items"]] == ["p1", "p3"]
    assert result["metadata"]["resourceVersion"] == "5"
    page = pods.list(limit=3)
    rest = pods.list(limit=3, continue_token=page["metadata"]["continue"])
    assert len(page["items"]) + len(rest["items"]) == 5
    assert client.resource(NODES).list()["items"] == []


def test_watch_streams_events_and_close_from_other_thread(server, client):
    pods = client.resource(PODS)
    pods.create({"metadata": {"name": "a", "namespace": "n"}})
    rv = pods.list()["metadata"]["resourceVersion"]
    stream = pods.watch(resource_version=rv, timeout_seconds=60)
    seen = []
    two = threading.Event()
    finished = threading.Event()

    def reader():
        for event in stream:
            seen.append(event)
            if len(seen) == 2:
                two.set()
        finished.set()

    threading.Thread(target=reader, daemon=True).start()
    pods.create({"metadata": {"name": "b", "namespace": "n"}})
    pods.delete("a", "n")
    assert two.wait(5)
    assert [(t, o["metadata"]["name"]) for t, o in seen] == [("ADDED", "b"), ("DELETED", "a")]
    stream.close()
    assert finished.wait(5)


def test_watch_ends_with_server_timeout(server, client):
    stream = client.resource(PODS).watch(resource_version="0", timeout_seconds=1)
    assert list(stream) == []


def test_watch_error_event_surfaces_as_status(server, client):
    pods = client.resource(PODS)
    pods.create({"metadata": {"name": "a", "namespace": "n"}})
    pods.create({"metadata": {"name": "b", "namespace": "n"}})
    server.fake.compact()
    events = list(pods.watch(resource_version="1", timeout_seconds=30))
    assert events[0][0] == "ERROR" and events[0][1]["code"] == 410


def test_connection_refused_is_transport_error():
    kc = kube_client_for("http://127.0.0.1:9")
    with pytest.raises(TransportError):
        kc.resource(PODS).list()
    with pytest.raises(TransportError):
        kc.resource(PODS).watch()


def test_load_kube_client_env_wins_and_master_overrides(tmp_path, monkeypatch):
    def kubeconfig(path, server):
        path.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters: [{{name: k, cluster: {{server: '{server}'}}}}]\n"
            "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
            "users: [{name: u, user: {token: secret-token}}]\n"
        )
        return str(path)

    flag = kubeconfig(tmp_path / "flag.yaml", "http://127.0.0.1:1111")
    env = kubeconfig(tmp_path / "env.yaml", "http://127.0.0.1:2222")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert load_kube_client(flag).host == "http://127.0.0.1:1111"
    monkeypatch.setenv("KUBECONFIG", env)
    kc = load_kube_client(flag)
    assert kc.host == "http://127.0.0.1:2222"
    assert kc.api_client.user_agent == USER_AGENT
    assert kc.api_client.configuration.connection_pool_maxsize == CONNECTION_POOL_MAXSIZE
    assert kc.transport._headers(None)["authorization"] == "Bearer secret-token"
    assert load_kube_client(flag, master="http://127.0.0.1:3333/").host == "http://127.0.0.1:3333"
    monkeypatch.delenv("KUBECONFIG")
    assert load_kube_client(None, master="http://127.0.0.1:4444").host == "http://127.0.0.1:4444"
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigException):
        load_kube_client()
