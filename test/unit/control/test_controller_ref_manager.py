"""Claiming pods and services: the v0.5.3 (client-go) adopt/release rules."""

import pytest

from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.control.controller_ref_manager import ClaimErrors, PodControllerRefManager
from tf_operator.control.pod_control import PodControl
from tf_operator.control.service_control import ServiceControl
from tf_operator.control.service_ref_manager import ServiceControllerRefManager
from tf_operator.k8s.client import PODS, SERVICES
from tf_operator.k8s.labels import selector_from_set

LABELS = {"group-name": "kubeflow.org", "tf-job-name": "job"}
JOB = {"metadata": {"name": "job", "namespace": "ns", "uid": "job-uid"}}
MINE = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "name": "job",
    "uid": "job-uid",
    "controller": True,
}


def _pod(name, labels=None, owner=None, deleting=False):
    meta = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [owner]
    if deleting:
        meta["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "image": "i"}]}}


def _manager(client, job=JOB, can_adopt=lambda: None):
    return PodControllerRefManager(
        PodControl(client, FakeRecorder()),
        job,
        selector_from_set(LABELS),
        "kubeflow.org/v1",
        "TFJob",
        can_adopt,
    )


def _patches(client, plural="pods"):
    return [(a.name, a.body) for a in client.filter_actions("patch", plural)]


def test_claim_rules():
    client = FakeKubeClient()
    pods = [
        _pod("owned-match", LABELS, MINE),
        _pod("owned-other", LABELS, {**MINE, "uid": "other"}),
        _pod("owned-nomatch", {"x": "y"}, MINE),
        _pod("orphan-match", LABELS),
        _pod("orphan-nomatch", {"x": "y"}),
        _pod("orphan-deleting", LABELS, deleting=True),
    ]
    # The claim sees the cache's copies, which carry the API's uids.
    cached = [client.resource(PODS).create(pod, namespace="ns") for pod in pods]
    cached[-1]["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    client.clear_actions()
    claimed = _manager(client).claim_pods(cached)
    assert [p["metadata"]["name"] for p in claimed] == ["owned-match", "orphan-match"]
    patches = dict(_patches(client))
    assert set(patches) == {"owned-nomatch", "orphan-match"}
    assert patches["owned-nomatch"] == {
        "metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": "job-uid"}],
            "uid": cached[2]["metadata"]["uid"],
        }
    }
    adopt_ref = patches["orphan-match"]["metadata"]["ownerReferences"][0]
    assert adopt_ref == {**MINE, "blockOwnerDeletion": True}


def test_deleting_job_neither_adopts_nor_releases():
    client = FakeKubeClient()
    job = {"metadata": {**JOB["metadata"], "deletionTimestamp": "2020-01-01T00:00:00Z"}}
    pods = [_pod("owned-nomatch", {"x": "y"}, MINE), _pod("orphan", LABELS)]
    assert _manager(client, job).claim_pods(pods) == []
    assert _patches(client) == []


def test_failed_recheck_blocks_adoption_and_runs_once():
    client = FakeKubeClient()
    calls = []

    def can_adopt():
        calls.append(1)
        raise RuntimeError("job is being deleted")

    pods = [_pod("a", LABELS), _pod("b", LABELS), _pod("owned", LABELS, MINE)]
    with pytest.raises(ClaimErrors) as info:
        _manager(client, can_adopt=can_adopt).claim_pods(pods)
    assert len(info.value.errors) == 2
    assert calls == [1]
    assert _patches(client) == []


def test_adopting_a_vanished_pod_is_not_an_error():
    client = FakeKubeClient()  # the pod is only in the "cache", not in the API: patch → 404
    assert _manager(client).claim_pods([_pod("ghost", LABELS)]) == []


def test_services_claimed_the_same_way():
    client = FakeKubeClient()
    svc = client.resource(SERVICES).create(_pod("svc", LABELS), namespace="ns")
    client.clear_actions()
    manager = ServiceControllerRefManager(
        ServiceControl(client, FakeRecorder()),
        JOB,
        selector_from_set(LABELS),
        "kubeflow.org/v1",
        "TFJob",
        lambda: None,
    )
    assert len(manager.claim_services([svc])) == 1
    assert [name for name, _ in _patches(client, "services")] == ["svc"]
