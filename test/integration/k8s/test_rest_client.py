"""The real ResourceClient over the kubernetes ApiClient, against the local cluster's API
server (the wire path: JSON, chunked watches, Status errors)."""

import threading

import pytest

from localcluster.controlplane.emulated import APIServer
from tf_operator.k8s.client import (
    NAMESPACES,
    NODES,
    PODS,
    Resource,
    is_already_exists,
    is_conflict,
    is_not_found,
    load_kube_client,
)

pytestmark = pytest.mark.integration

TFJOBS = Resource("kubeflow.org", "v1", "tfjobs", "TFJob")
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
SPEC = {"containers": [{"name": "c", "image": "i"}]}
OPEN_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


@pytest.fixture
def server():
    srv = APIServer(host="127.0.0.1", port=0)
    srv.start()
    for ns in ("ns", "n"):
        srv.registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": ns}})
    crd_version = {"name": "v1", "served": True, "storage": True, "schema": OPEN_SCHEMA}
    crd_version["subresources"] = {"status": {}}
    srv.registry.create(
        CRDS,
        None,
        {
            "metadata": {"name": "tfjobs.kubeflow.org"},
            "spec": {
                "group": "kubeflow.org",
                "names": {"plural": "tfjobs", "kind": "TFJob"},
                "scope": "Namespaced",
                "versions": [crd_version],
            },
        },
    )
    yield srv
    srv.stop()


@pytest.fixture
def client(server):
    kc = load_kube_client(master=server.url)
    yield kc
    kc.close()


def pod(name, **meta):
    return {"metadata": {"name": name, **meta}, "spec": SPEC}


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


def test_list_with_selectors_and_pages(server, client):
    pods = client.resource(PODS)
    for i in range(5):
        last = pods.create(pod(f"p{i}", namespace="n", labels={"i": str(i)}))
    result = pods.list("n", label_selector="i in (1,3)")
    assert [p["metadata"]["name"] for p in result["items"]] == ["p1", "p3"]
    assert result["metadata"]["resourceVersion"] == last["metadata"]["resourceVersion"]
    page = pods.list(limit=3)
    rest = pods.list(limit=3, continue_token=page["metadata"]["continue"])
    assert len(page["items"]) + len(rest["items"]) == 5
    assert client.resource(NODES).list()["items"] == []
    assert "ns" in {n["metadata"]["name"] for n in client.resource(NAMESPACES).list()["items"]}


def test_watch_streams_events_and_close_from_other_thread(server, client):
    pods = client.resource(PODS)
    pods.create(pod("a", namespace="n"))
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
    pods.create(pod("b", namespace="n"))
    pods.delete("a", "n", grace_period_seconds=0)
    assert two.wait(5)
    assert [(t, o["metadata"]["name"]) for t, o in seen] == [("ADDED", "b"), ("DELETED", "a")]
    stream.close()
    assert finished.wait(5)


def test_watch_ends_with_server_timeout(server, client):
    stream = client.resource(PODS).watch(resource_version="0", timeout_seconds=1)
    assert list(stream) == []


def test_watch_error_event_surfaces_as_status(server, client):
    pods = client.resource(PODS)
    first = pods.create(pod("a", namespace="n"))
    pods.create(pod("b", namespace="n"))
    server.registry.compact()
    rv = first["metadata"]["resourceVersion"]
    events = list(pods.watch(resource_version=rv, timeout_seconds=30))
    assert events[0][0] == "ERROR" and events[0][1]["code"] == 410
