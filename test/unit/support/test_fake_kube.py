"""The unit tests' fake client: it records actions, lets reactors answer, and leaves every
API rule to the local cluster's registry."""

import threading

import pytest

from support.fake_kube import FakeKubeClient
from tf_operator.k8s.client import (
    PODS,
    Resource,
    TransportError,
    is_conflict,
    is_not_found,
    new_internal_error,
)

JOBS = Resource("example.org", "v1", "jobs", "Job")


def pod(name, ns="ns"):
    return {
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


def test_actions_are_recorded_and_reactors_answer_first():
    fake = FakeKubeClient({PODS: [pod("a")]})
    assert fake.actions == []
    fake.prepend_reactor("get", "pods", lambda a: (a.name == "x", new_internal_error("boom")))
    with pytest.raises(Exception, match="boom"):
        fake.resource(PODS).get("x", "ns")
    assert fake.resource(PODS).get("a", "ns")["metadata"]["name"] == "a"
    assert [(a.verb, a.name) for a in fake.filter_actions("get", "pods")] == [
        ("get", "x"),
        ("get", "a"),
    ]


def test_the_registry_decides_api_semantics():
    fake = FakeKubeClient()
    pods = fake.resource(PODS)
    created = pods.create(pod("a"))
    stale = dict(created, metadata={**created["metadata"]})
    pods.patch("a", {"metadata": {"labels": {"x": "1"}}}, "ns")
    with pytest.raises(Exception) as err:
        pods.update(stale)
    assert is_conflict(err.value)
    with pytest.raises(Exception) as err:
        pods.get("missing", "ns")
    assert is_not_found(err.value)


def test_unknown_custom_resources_are_served_with_a_status_subresource():
    jobs = FakeKubeClient().resource(JOBS)
    job = jobs.create({"metadata": {"name": "j", "namespace": "ns"}, "spec": {"any": [1]}})
    job["status"] = {"phase": "x"}
    job["spec"] = {"ignored": True}
    written = jobs.update_status(job)
    assert written["status"] == {"phase": "x"} and written["spec"] == {"any": [1]}


@pytest.mark.parametrize("how", ["end", "error", "break"])
def test_watch_controls(how):
    fake = FakeKubeClient()
    pods = fake.resource(PODS)
    rv = pods.create(pod("a"))["metadata"]["resourceVersion"]
    stream = pods.watch(resource_version=rv)
    pods.create(pod("b"))
    got, failure = [], []

    def read():
        try:
            got.extend(stream)
        except TransportError as err:
            failure.append(err)

    reader = threading.Thread(target=read)
    reader.start()
    assert fake.watch_count() == 1
    if how == "end":
        fake.end_watches()
    elif how == "error":
        fake.send_watch_error({"kind": "Status", "code": 410})
    else:
        fake.break_watches()
    reader.join(5)
    assert [(t, o["metadata"]["name"]) for t, o in got[:1]] == [("ADDED", "b")]
    assert [t for t, _ in got[1:]] == (["ERROR"] if how == "error" else [])
    assert bool(failure) == (how == "break")
    assert fake.watch_count() == 0


def test_compaction_expires_old_watches():
    fake = FakeKubeClient()
    pods = fake.resource(PODS)
    rv = pods.create(pod("a"))["metadata"]["resourceVersion"]
    pods.create(pod("b"))
    fake.compact()
    events = list(pods.watch(resource_version=rv))
    assert events[0][0] == "ERROR" and events[0][1]["code"] == 410
