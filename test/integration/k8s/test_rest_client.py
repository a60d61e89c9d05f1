"""The real ResourceClient over the kubernetes ApiClient, against the local cluster's API
server (the wire path: JSON, chunked watches, Status errors)."""

import threading

import pytest

from tf_operator.k8s.client import (
    NAMESPACES,
    NODES,
    PODS,
    ApiError,
    Resource,
    is_already_exists,
    is_conflict,
    is_not_found,
)

pytestmark = pytest.mark.integration

TFJOBS = Resource("kubeflow.org", "v1", "tfjobs", "TFJob")
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
SPEC = {"containers": [{"name": "c", "image": "i"}]}
OPEN_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


TFJOB = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob"}
TFJOBS_CRD = {
    "metadata": {"name": "tfjobs.kubeflow.org"},
    "spec": {
        "group": "kubeflow.org",
        "names": {"plural": "tfjobs", "kind": "TFJob"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": OPEN_SCHEMA,
                "subresources": {"status": {}},
            }
        ],
    },
}


@pytest.fixture(scope="module")
def server(control_plane):
    """The module's API server with an open TFJob CRD."""
    control_plane.install_crd(TFJOBS_CRD)
    return control_plane


@pytest.fixture
def ns(server) -> str:
    return server.namespace()


@pytest.fixture
def client(server):
    kc = server.kube()
    yield kc
    kc.close()


def pod(name, **meta):
    return {"metadata": {"name": name, **meta}, "spec": SPEC}


def gone(jobs, name, ns) -> bool:
    try:
        jobs.get(name, ns)
    except Exception as err:  # noqa: BLE001 - only NotFound counts
        if is_not_found(err):
            return True
        raise
    return False


def test_crud_round_trip(client, ns, poll_until):
    jobs = client.resource(TFJOBS)
    created = jobs.create({**TFJOB, "metadata": {"name": "j", "namespace": ns}, "spec": {"a": 1}})
    assert created["metadata"]["uid"] and created["apiVersion"] == "kubeflow.org/v1"
    assert jobs.get("j", ns)["spec"] == {"a": 1}
    created["status"] = {"phase": "x"}
    assert jobs.update_status(created)["status"] == {"phase": "x"}
    patched = jobs.patch("j", {"spec": {"b": 2}}, ns)
    assert patched["spec"] == {"a": 1, "b": 2}
    patched = jobs.patch("j", [{"op": "remove", "path": "/spec/a"}], ns, patch_type="json")
    assert patched["spec"] == {"b": 2}
    with pytest.raises(Exception) as info:
        jobs.update(created)
    assert is_conflict(info.value) and info.value.body["kind"] == "Status"
    with pytest.raises(Exception) as info:
        jobs.create({**TFJOB, "metadata": {"name": "j", "namespace": ns}})
    assert is_already_exists(info.value)
    jobs.delete("j", ns, propagation_policy="Foreground")
    # Foreground: the garbage collector removes the object once it has no dependents (at
    # once on the emulator; kube-controller-manager's a moment later)
    poll_until(lambda: gone(jobs, "j", ns), timeout=30)


def test_list_with_selectors_and_pages(client, ns):
    pods = client.resource(PODS)
    for i in range(5):
        last = pods.create(pod(f"p{i}", namespace=ns, labels={"i": str(i)}))
    result = pods.list(ns, label_selector="i in (1,3)")
    assert [p["metadata"]["name"] for p in result["items"]] == ["p1", "p3"]
    # the list is at least as new as the last write (kube-apiserver's may be newer: its
    # controllers write too)
    listed_at = int(result["metadata"]["resourceVersion"])
    assert listed_at >= int(last["metadata"]["resourceVersion"])
    page = pods.list(ns, limit=3)
    rest = pods.list(ns, limit=3, continue_token=page["metadata"]["continue"])
    assert len(page["items"]) == 3 and len(rest["items"]) == 2
    assert not rest["metadata"].get("continue")
    assert client.resource(NODES).list()["items"] == []
    assert ns in {n["metadata"]["name"] for n in client.resource(NAMESPACES).list()["items"]}


def test_watch_streams_events_and_close_from_other_thread(client, ns):
    pods = client.resource(PODS)
    pods.create(pod("a", namespace=ns))
    rv = pods.list(ns)["metadata"]["resourceVersion"]
    stream = pods.watch(ns, resource_version=rv, timeout_seconds=60)
    seen = []
    two = threading.Event()
    finished = threading.Event()

    def reader():
        for event in stream:
            seen.append(event)
            if event[0] == "DELETED":
                two.set()
        finished.set()

    threading.Thread(target=reader, daemon=True).start()
    pods.create(pod("b", namespace=ns))
    pods.delete("a", ns, grace_period_seconds=0)
    assert two.wait(5)
    # kube-scheduler marks a pod it cannot place (there are no nodes): MODIFIED events
    # may come between these
    changes = [(t, o["metadata"]["name"]) for t, o in seen if t != "MODIFIED"]
    assert changes[:2] == [("ADDED", "b"), ("DELETED", "a")]
    stream.close()
    assert finished.wait(5)


def test_watch_ends_with_server_timeout(client, ns):
    stream = client.resource(PODS).watch(ns, resource_version="0", timeout_seconds=1)
    assert list(stream) == []


@pytest.mark.emulator_only(reason="compacts the emulator's watch history on demand")
def test_watch_error_event_surfaces_as_status(server, client, ns):
    pods = client.resource(PODS)
    first = pods.create(pod("a", namespace=ns))
    pods.create(pod("b", namespace=ns))
    server.server.registry.compact()
    rv = first["metadata"]["resourceVersion"]
    events = list(pods.watch(resource_version=rv, timeout_seconds=30))
    assert events[0][0] == "ERROR" and events[0][1]["code"] == 410


def test_a_custom_resource_without_kind_is_unrecognized(client, ns):
    """A custom resource is read as unstructured JSON, which names its own kind (a built-in
    type's kind defaults from the URL): kube-apiserver refuses the body with a 400."""
    with pytest.raises(ApiError) as info:
        client.resource(TFJOBS).create({"metadata": {"name": "kindless", "namespace": ns}})
    assert info.value.status == 400
    assert "the object provided is unrecognized (must be of type TFJob)" in str(info.value)
    assert "Object 'Kind' is missing in" in str(info.value)
    created = client.resource(PODS).create(pod("kindless", namespace=ns))
    assert created["kind"] == "Pod"
