import threading

import pytest

from tf_operator.k8s.client import (
    CONFIGMAPS,
    NODES,
    PODS,
    ApiError,
    FakeKubeClient,
    Resource,
    is_already_exists,
    is_conflict,
    is_invalid,
    is_not_found,
    new_internal_error,
)

TFJOBS = Resource("kubeflow.org", "v1", "tfjobs", "TFJob")


def pod(name, ns="default", labels=None, **extra):
    return {"metadata": {"name": name, "namespace": ns, "labels": labels or {}}, **extra}


def drain(stream, n, timeout=5.0):
    out = []
    got = threading.Event()

    def run():
        for ev in stream:
            out.append(ev)
            if len(out) == n:
                got.set()
                return
        got.set()

    threading.Thread(target=run, daemon=True).start()
    assert got.wait(timeout), f"got {len(out)} of {n} events"
    return out


def test_create_sets_metadata_and_rejects_duplicates():
    fake = FakeKubeClient()
    pods = fake.resource(PODS)
    created = pods.create(pod("a"), "default")
    meta = created["metadata"]
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert meta["resourceVersion"] == "1"
    assert created["kind"] == "Pod" and created["apiVersion"] == "v1"
    with pytest.raises(Exception) as info:
        pods.create(pod("a"))
    assert is_already_exists(info.value)
    assert info.value.body["reason"] == "AlreadyExists" and info.value.status == 409


def test_generate_name_and_invalid():
    pods = FakeKubeClient().resource(PODS)
    p = pods.create({"metadata": {"generateName": "job-worker-"}}, "ns")
    assert p["metadata"]["name"].startswith("job-worker-") and len(p["metadata"]["name"]) == 16
    with pytest.raises(Exception) as info:
        pods.create({"metadata": {}}, "ns")
    assert is_invalid(info.value)


def test_get_not_found_and_cluster_scoped():
    fake = FakeKubeClient()
    with pytest.raises(Exception) as info:
        fake.resource(PODS).get("nope", "default")
    assert is_not_found(info.value) and info.value.message == 'pods "nope" not found'
    fake.resource(NODES).create({"metadata": {"name": "n1"}})
    assert fake.resource(NODES).get("n1")["metadata"]["name"] == "n1"
    assert "namespace" not in fake.resource(NODES).get("n1")["metadata"]


def test_update_conflict_on_stale_rv_and_status_subresource():
    jobs = FakeKubeClient().resource(TFJOBS)
    job = jobs.create({"metadata": {"name": "j", "namespace": "ns"}, "spec": {"x": 1}})
    job["spec"]["x"] = 2
    job["status"] = {"phase": "ignored"}
    updated = jobs.update(job)
    assert updated["spec"]["x"] == 2 and "status" not in updated
    assert updated["metadata"]["generation"] == 2
    with pytest.raises(Exception) as info:
        jobs.update(job)  # job still carries the old resourceVersion
    assert is_conflict(info.value)
    updated["status"] = {"conditions": [{"type": "Running"}]}
    updated["spec"]["x"] = 99
    after = jobs.update_status(updated)
    assert after["status"]["conditions"][0]["type"] == "Running"
    assert after["spec"]["x"] == 2  # status updates change only status
    assert int(after["metadata"]["resourceVersion"]) > int(updated["metadata"]["resourceVersion"])


def test_update_without_status_subresource_keeps_status_field():
    cms = FakeKubeClient().resource(CONFIGMAPS)
    cm = cms.create({"metadata": {"name": "c", "namespace": "n"}, "data": {"a": "1"}})
    cm["data"]["a"] = "2"
    assert cms.update(cm)["data"]["a"] == "2"


def test_noop_update_keeps_resource_version():
    pods = FakeKubeClient().resource(PODS)
    p = pods.create(pod("a"), "default")
    assert pods.update(p)["metadata"]["resourceVersion"] == p["metadata"]["resourceVersion"]


def test_patches():
    pods = FakeKubeClient().resource(PODS)
    pods.create(pod("a", labels={"x": "1", "y": "2"}), "default")
    p = pods.patch("a", {"metadata": {"labels": {"x": None, "z": "3"}}}, "default")
    assert p["metadata"]["labels"] == {"y": "2", "z": "3"}
    p = pods.patch(
        "a",
        [{"op": "add", "path": "/metadata/labels/w", "value": "4"}],
        "default",
        patch_type="json",
    )
    assert p["metadata"]["labels"]["w"] == "4"
    p = pods.patch("a", {"status": {"phase": "Running"}}, "default", subresource="status")
    assert p["status"]["phase"] == "Running"
    with pytest.raises(Exception) as info:
        pods.patch(
            "a",
            [{"op": "test", "path": "/metadata/name", "value": "b"}],
            "default",
            patch_type="json",
        )
    assert is_invalid(info.value)
    with pytest.raises(Exception) as info:
        pods.patch("a", {"metadata": {"resourceVersion": "1"}}, "default")
    assert is_conflict(info.value)


def test_list_selectors_and_pagination():
    fake = FakeKubeClient()
    pods = fake.resource(PODS)
    for i in range(5):
        pods.create(pod(f"p{i}", "a" if i % 2 else "b", {"i": str(i), "odd": str(i % 2)}))
    everything = pods.list()
    assert [p["metadata"]["name"] for p in everything["items"]] == ["p1", "p3", "p0", "p2", "p4"]
    assert everything["metadata"]["resourceVersion"] == "5"
    assert everything["kind"] == "PodList"
    assert len(pods.list("a")["items"]) == 2
    assert [p["metadata"]["name"] for p in pods.list(label_selector="odd=0,i!=2")["items"]] == [
        "p0",
        "p4",
    ]
    assert len(pods.list(field_selector="metadata.name=p3")["items"]) == 1
    first = pods.list(limit=2)
    assert len(first["items"]) == 2 and first["metadata"]["continue"]
    second = pods.list(limit=2, continue_token=first["metadata"]["continue"])
    third = pods.list(limit=2, continue_token=second["metadata"]["continue"])
    names = [p["metadata"]["name"] for page in (first, second, third) for p in page["items"]]
    assert names == ["p1", "p3", "p0", "p2", "p4"] and "continue" not in third["metadata"]


def test_delete_with_finalizers_and_preconditions():
    pods = FakeKubeClient().resource(PODS)
    p = pods.create(pod("a"), "default")
    with pytest.raises(Exception) as info:
        pods.delete("a", "default", preconditions_uid="other")
    assert is_conflict(info.value)
    pods.delete("a", "default", preconditions_uid=p["metadata"]["uid"])
    with pytest.raises(Exception) as info:
        pods.delete("a", "default")
    assert is_not_found(info.value)
    f = pods.create({"metadata": {"name": "f", "finalizers": ["x"]}}, "default")
    marked = pods.delete("f", "default")
    assert marked["metadata"]["deletionTimestamp"]
    marked["metadata"]["finalizers"] = []
    pods.update(marked)
    with pytest.raises(ApiError) as info:
        pods.get("f", "default")
    assert is_not_found(info.value) and f


def test_watch_replays_from_rv_and_streams_live():
    fake = FakeKubeClient()
    pods = fake.resource(PODS)
    pods.create(pod("a"), "default")
    rv = pods.list()["metadata"]["resourceVersion"]
    pods.create(pod("b"), "default")
    stream = pods.watch(resource_version=rv)
    pods.patch("a", {"metadata": {"labels": {"k": "v"}}}, "default")
    pods.delete("b", "default")
    events = drain(stream, 3)
    assert [(t, o["metadata"]["name"]) for t, o in events] == [
        ("ADDED", "b"),
        ("MODIFIED", "a"),
        ("DELETED", "b"),
    ]
    stream.close()
    assert fake.watch_count() == 0


def test_watch_selector_transitions():
    pods = FakeKubeClient().resource(PODS)
    pods.create(pod("a", labels={"app": "x"}), "default")
    stream = pods.watch(resource_version="1", label_selector="app=y")
    pods.patch("a", {"metadata": {"labels": {"app": "y"}}}, "default")
    pods.patch("a", {"metadata": {"labels": {"app": "z"}}}, "default")
    assert [t for t, _ in drain(stream, 2)] == ["ADDED", "DELETED"]
    stream.close()


def test_watch_too_old_rv_gets_410_error_event():
    fake = FakeKubeClient()
    fake.resource(PODS).create(pod("a"), "default")
    fake.resource(PODS).create(pod("b"), "default")
    fake.compact()
    events = list(fake.resource(PODS).watch(resource_version="1"))
    assert len(events) == 1
    kind, status = events[0]
    assert kind == "ERROR" and status["code"] == 410 and status["reason"] == "Expired"
    fresh = fake.resource(PODS).watch(resource_version="0")
    assert [t for t, _ in drain(fresh, 2)] == ["ADDED", "ADDED"]
    fresh.close()


def test_watch_end_and_break_controls():
    fake = FakeKubeClient()
    s1 = fake.resource(PODS).watch(resource_version="0")
    assert fake.end_watches() == 1
    assert list(s1) == []
    s2 = fake.resource(PODS).watch(resource_version="0")
    fake.break_watches()
    with pytest.raises(Exception, match="reset"):
        list(s2)


def test_actions_and_reactors():
    fake = FakeKubeClient()
    pods = fake.resource(PODS)
    calls = []

    def fail_create(action):
        calls.append(action)
        return True, new_internal_error("boom")

    fake.prepend_reactor("create", "pods", fail_create)
    with pytest.raises(Exception, match="boom"):
        pods.create(pod("a"), "default")
    assert calls[0].verb == "create" and calls[0].body["metadata"]["name"] == "a"
    fake.prepend_reactor("get", "*", lambda a: (True, {"metadata": {"name": a.name}}))
    assert pods.get("zzz", "default") == {"metadata": {"name": "zzz"}}
    fake.prepend_reactor("delete", "pods", lambda a: (False, None))  # not handled: falls through
    with pytest.raises(Exception) as info:
        pods.delete("zzz", "default")
    assert is_not_found(info.value)
    verbs = [(a.verb, a.resource_plural, a.namespace, a.name) for a in fake.actions]
    assert verbs == [
        ("create", "pods", "default", "a"),
        ("get", "pods", "default", "zzz"),
        ("delete", "pods", "default", "zzz"),
    ]
    fake.clear_actions()
    assert fake.actions == []


def test_update_status_action_has_status_subresource():
    fake = FakeKubeClient()
    p = fake.resource(PODS).create(pod("a"), "default")
    fake.clear_actions()
    p["status"] = {"phase": "Running"}
    fake.resource(PODS).update_status(p)
    (action,) = fake.actions
    assert (action.verb, action.subresource) == ("update", "status")


def test_preloaded_objects():
    fake = FakeKubeClient({PODS: [pod("a"), pod("b", "other")]})
    assert fake.actions == []
    assert len(fake.resource(PODS).list()["items"]) == 2
