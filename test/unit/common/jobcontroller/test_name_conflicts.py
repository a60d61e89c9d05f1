"""A replica's name held by another controller's object (D152): a job of another kind with the
same name, or a stray object the claim does not adopt, fails the job with a clear reason
instead of a create that meets AlreadyExists for ever, or a success without the replica.
An earlier job of the same kind and name, still being garbage-collected, is no conflict."""

import logging

OTHER_KIND = {
    "tfjob": ("PyTorchJob", "kubeflow.org/v1"),
    "pytorchjob": ("TFJob", "kubeflow.org/v1"),
    "paddlejob": ("TFJob", "kubeflow.org/v1"),
}


def _held_by_other_kind(k, job, rt, index):
    """The object a job of the other kind with the same name made for this replica."""
    kind, api_version = OTHER_KIND[k.name]
    pod = k.new_pod(job, rt, index, phase="Running")
    pod["metadata"]["ownerReferences"] = [
        {
            "apiVersion": api_version,
            "kind": kind,
            "name": job["metadata"]["name"],
            "uid": "uid-of-the-other-kind",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    return pod, kind


def test_a_pod_name_held_by_a_job_of_another_kind_fails_the_job(harness, k):
    job = harness.add_job(k.new_job(worker=2, leader=1))
    pod, other = _held_by_other_kind(k, job, "worker", 1)
    harness.add_pod(pod)
    harness.sync(job)
    failed = [c for c in harness.status(job)["conditions"] if c["type"] == "Failed"]
    message = (
        f"{k.kind_name} test-tfjob cannot create its pod test-tfjob-worker-1: a pod of that "
        f"name exists and {other} test-tfjob controls it; rename the job or delete that pod"
    )
    assert [(c["status"], c["reason"], c["message"]) for c in failed] == [
        ("True", "NameConflict", message)
    ]
    assert f"Warning NameConflict {message}" in harness.recorder.events
    # the pass finished the job: none of its creates ran (D50), the other job's pod is intact
    assert harness.created("pods") == [] and harness.deleted("pods") == []


def test_a_service_name_held_by_a_job_of_another_kind_fails_the_job(harness, k):
    job = harness.add_job(k.new_job(worker=1))
    service = k.new_service(job, "worker", 0)
    service["metadata"]["ownerReferences"] = _held_by_other_kind(k, job, "worker", 0)[0][
        "metadata"
    ]["ownerReferences"]
    harness.add_service(service)
    harness.sync(job)
    assert ("Failed", "True", "NameConflict") in harness.conditions(job)


def test_a_stray_pod_the_claim_does_not_adopt_fails_the_job(harness, k):
    job = harness.add_job(k.new_job(worker=1))
    harness.add_pod(
        {
            "metadata": {"name": "test-tfjob-worker-0", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
    )
    harness.sync(job)
    failed = [c for c in harness.status(job)["conditions"] if c["type"] == "Failed"]
    assert "no controller, and its labels are not this job's" in failed[0]["message"]


def test_an_earlier_job_of_the_same_kind_and_name_is_no_conflict(harness, k):
    """Its pods are being garbage-collected: the create waits for them (it meets
    AlreadyExists meanwhile, and is retried), the job does not fail."""
    job = harness.add_job(k.new_job(worker=1))
    pod = k.new_pod(job, "worker", 0)
    pod["metadata"]["ownerReferences"][0]["uid"] = "uid-of-the-deleted-job"
    harness.add_pod(pod)
    harness.sync(job)  # its create meets AlreadyExists, and is retried with the backoff
    assert "Failed" not in [c[0] for c in harness.conditions(job)]


def test_pods_of_another_kind_are_not_logged_as_orphans(harness, k, caplog):
    job = harness.add_job(k.new_job(worker=1))
    pod, _ = _held_by_other_kind(k, job, "worker", 0)
    with caplog.at_level(logging.INFO):
        harness.ctr.pods.on_add(pod)
        own = k.new_pod(job, "worker", 0)
        own["metadata"]["ownerReferences"][0]["uid"] = "a-job-that-is-gone"
        harness.ctr.pods.on_add(own)
    logged = [r.getMessage() for r in caplog.records if "job does not exist" in r.getMessage()]
    assert logged == ["This pod's job does not exist"]  # its own kind's orphan only
