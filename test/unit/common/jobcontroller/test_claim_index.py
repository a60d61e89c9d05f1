"""Every kind's claim through the per-job indices: same adopt/release/ignore rules, only the job's objects.

The claim of a sync must visit only objects controlled by the job or labelled with its name;
pods and services of other jobs in the namespace (and anything in other namespaces) are never
handed to the claim logic.
"""

from __future__ import annotations

import copy

import pytest

from tf_operator.control.controller_ref_manager import ControllerRefManager


@pytest.fixture
def visited(monkeypatch) -> list[str]:
    """Names of the objects the claim logic looks at."""
    seen: list[str] = []
    original = ControllerRefManager.claim_object

    def spy(self, obj, *args, **kwargs):
        seen.append(obj["metadata"]["name"])
        return original(self, obj, *args, **kwargs)

    monkeypatch.setattr(ControllerRefManager, "claim_object", spy)
    return seen


def patches(harness, plural: str) -> dict[str, dict]:
    return {a.name: a.body for a in harness.client.filter_actions("patch", plural)}


def names(objs: list[dict]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def add_foreign_jobs(harness, k, count: int) -> None:
    """``count`` other jobs, each with an owned pod and service, plus an orphan pod each."""
    for i in range(count):
        other = harness.add_job(k.new_job(worker=1, name=f"other-{i}"))
        harness.add_pod(k.new_pod(other, "worker", 0, "Running"))
        harness.add_service(k.new_service(other, "worker", 0))
        orphan = k.new_pod(other, "worker", 1, name=f"other-{i}-orphan")
        del orphan["metadata"]["ownerReferences"]
        harness.add_pod(orphan)


def test_orphan_with_matching_labels_is_adopted(harness, k):
    job = harness.add_job(k.new_job(worker=1))
    orphan = k.new_pod(job, "worker", 0)
    del orphan["metadata"]["ownerReferences"]
    harness.add_pod(orphan)
    claimed = harness.ctr.pods.claim(harness.decoded(job))
    assert names(claimed) == ["test-tfjob-worker-0"]
    refs = patches(harness, "pods")["test-tfjob-worker-0"]["metadata"]["ownerReferences"]
    assert [(r["uid"], r["controller"]) for r in refs] == [(job["metadata"]["uid"], True)]


@pytest.mark.parametrize("label", ["job_name", "group_name"])
def test_owned_pod_whose_labels_changed_is_released(harness, k, label):
    job = harness.add_job(k.new_job(worker=1))
    pod = k.new_pod(job, "worker", 0)
    del pod["metadata"]["labels"][getattr(k.kind.labels, label)]
    harness.add_pod(pod)
    assert harness.ctr.pods.claim(harness.decoded(job)) == []
    body = patches(harness, "pods")["test-tfjob-worker-0"]
    assert body["metadata"]["ownerReferences"] == [
        {"$patch": "delete", "uid": job["metadata"]["uid"]}
    ]


def test_owned_service_whose_job_label_changed_is_released(harness, k):
    job = harness.add_job(k.new_job(worker=1))
    service = k.new_service(job, "worker", 0)
    service["metadata"]["labels"][k.kind.labels.job_name] = "someone-else"
    harness.add_service(service)
    assert harness.ctr.services.claim(harness.decoded(job)) == []
    assert "test-tfjob-worker-0" in patches(harness, "services")


def test_matching_pod_owned_by_another_controller_is_ignored(harness, k, visited):
    job = harness.add_job(k.new_job(worker=1))
    pod = k.new_pod(job, "worker", 0)
    pod["metadata"]["ownerReferences"][0]["uid"] = "another-controller"
    harness.add_pod(pod)
    assert harness.ctr.pods.claim(harness.decoded(job)) == []
    assert visited == ["test-tfjob-worker-0"]  # looked at (label match), left alone
    assert patches(harness, "pods") == {}


def test_claim_visits_only_the_jobs_own_objects(harness, k, visited):
    add_foreign_jobs(harness, k, 50)
    job = harness.add_job(k.new_job(worker=2))
    harness.add_pods(job, "worker", active=2)
    harness.add_services(job, "worker", 2)
    released = k.new_pod(job, "worker", 2, name="released")
    del released["metadata"]["labels"][k.kind.labels.job_name]  # only reachable through its owner
    harness.add_pod(released)

    pods = harness.ctr.pods.claim(harness.decoded(job))
    assert names(pods) == ["test-tfjob-worker-0", "test-tfjob-worker-1"]
    assert sorted(visited) == ["released", "test-tfjob-worker-0", "test-tfjob-worker-1"]

    visited.clear()
    services = harness.ctr.services.claim(harness.decoded(job))
    assert names(services) == ["test-tfjob-worker-0", "test-tfjob-worker-1"]
    assert sorted(visited) == ["test-tfjob-worker-0", "test-tfjob-worker-1"]
    assert list(patches(harness, "pods")) == ["released"]


def test_objects_in_other_namespaces_are_not_visited(harness, k, visited):
    job = harness.add_job(k.new_job(worker=1))
    harness.add_pods(job, "worker", active=1)
    elsewhere = copy.deepcopy(k.new_pod(job, "worker", 0))
    elsewhere["metadata"]["namespace"] = "elsewhere"
    elsewhere["metadata"]["name"] = "same-job-other-namespace"
    harness.pod_informer.get_indexer().add(elsewhere)
    assert names(harness.ctr.pods.claim(harness.decoded(job))) == ["test-tfjob-worker-0"]
    assert visited == ["test-tfjob-worker-0"]


def test_full_sync_with_many_foreign_pods_claims_only_its_own(harness, k, visited):
    add_foreign_jobs(harness, k, 20)
    job = harness.add_job(k.new_job(worker=1))
    harness.add_pods(job, "worker", active=1)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    assert visited == ["test-tfjob-worker-0", "test-tfjob-worker-0"]  # its pod, its service
    assert harness.created("pods") == [] and harness.created("services") == []
