"""What is not a replica of this job is replaced, never counted (issue 27, items 6-8; D67,
D68): an earlier job's pods, pods without a valid index, a UID change seen as an update, and an
AlreadyExists that must not starve the other creates."""

import pytest

from tf_operator.k8s.client import PODS, SERVICES

EARLIER = "2025-12-31T23:59:00Z"  # before any job the fake stores (it stamps the real time)


def _uncache(harness, name):
    """The pod's deletion as the informer delivers it."""
    pod = harness.pod_informer.get_indexer().get_by_key(f"default/{name}")
    harness.pod_informer.get_indexer().delete(pod)
    harness.ctr.pods.on_delete(pod)


def _next_pass(harness, job):
    """Another sync once the cache shows the last pass's creates and status write."""
    for plural, informer, owned in (
        ("pods", harness.pod_informer, harness.ctr.pods),
        ("services", harness.service_informer, harness.ctr.services),
    ):
        for body in harness.created(plural):
            name = body["metadata"]["name"]
            created = harness.client.resource(informer_resource(plural)).get(name, "default")
            informer.get_indexer().add(created)
            owned.on_add(created)
    harness.cache_job(harness.stored_job(job))
    harness.client.clear_actions()
    harness.sync(job)


def informer_resource(plural):
    return PODS if plural == "pods" else SERVICES


def _stale(harness, pod):
    """Put ``pod`` in the API and the cache as created before every job."""
    stored = harness.add_pod(pod, cache=False)
    stored["metadata"]["creationTimestamp"] = EARLIER
    harness.pod_informer.get_indexer().add(stored)
    return stored


def test_an_earlier_jobs_completed_pod_is_replaced_not_counted(harness, tfu):
    """``kubectl delete tfjob --cascade=orphan`` then the same job again: the old run's pod
    must not make the new job Succeeded; it is deleted (Warning StalePod) and created anew."""
    job = harness.add_job(tfu.new_tfjob(worker=1))
    _stale(harness, tfu.new_pod(job, "worker", 0, "Succeeded"))
    harness.sync(job)
    assert harness.deleted("pods") == ["test-tfjob-worker-0"]
    assert harness.created("pods") == []  # its name is still held: no AlreadyExists
    assert not any(c[0] == "Succeeded" for c in harness.conditions(job))
    assert any(
        e.startswith("Warning StalePod Pod test-tfjob-worker-0") for e in harness.recorder.events
    )

    _uncache(harness, "test-tfjob-worker-0")
    _next_pass(harness, job)
    assert [p["metadata"]["name"] for p in harness.created("pods")] == ["test-tfjob-worker-0"]


def test_an_earlier_jobs_orphan_is_adopted_then_replaced(harness, tfu):
    job = harness.add_job(tfu.new_tfjob(worker=1))
    orphan = tfu.new_pod(job, "worker", 0, "Succeeded")
    del orphan["metadata"]["ownerReferences"]
    _stale(harness, orphan)
    harness.sync(job)
    assert [a[0] for a in harness.actions(plural="pods")] == ["patch"]  # adopted, no create
    assert not any(c[0] == "Succeeded" for c in harness.conditions(job))
    adopted = harness.client.resource(PODS).get("test-tfjob-worker-0", namespace="default")
    adopted["metadata"]["creationTimestamp"] = EARLIER
    harness.pod_informer.get_indexer().update(adopted)
    _next_pass(harness, job)
    assert harness.deleted("pods") == ["test-tfjob-worker-0"]
    assert harness.created("pods") == []


def test_an_orphan_of_the_same_second_from_another_job_is_replaced(harness, tfu):
    """Timestamps are whole seconds: an earlier job's orphan created in the second the job was
    created again is told apart by the uid its creator stamped on it (D154)."""
    from tf_operator.apis.common.v1.types import JOB_UID_LABEL

    job = harness.add_job(tfu.new_tfjob(worker=1))
    orphan = tfu.new_pod(job, "worker", 0, "Succeeded")
    del orphan["metadata"]["ownerReferences"]
    orphan["metadata"]["labels"][JOB_UID_LABEL] = "uid-of-the-earlier-job"
    stored = harness.add_pod(orphan, cache=False)
    stored["metadata"]["creationTimestamp"] = job["metadata"]["creationTimestamp"]
    harness.pod_informer.get_indexer().add(stored)
    harness.sync(job)
    assert not any(c[0] == "Succeeded" for c in harness.conditions(job))
    adopted = harness.client.resource(PODS).get("test-tfjob-worker-0", namespace="default")
    adopted["metadata"]["creationTimestamp"] = job["metadata"]["creationTimestamp"]
    harness.pod_informer.get_indexer().update(adopted)
    _next_pass(harness, job)
    assert harness.deleted("pods") == ["test-tfjob-worker-0"]
    assert not any(c[0] == "Succeeded" for c in harness.conditions(job))


def test_the_pods_a_job_creates_carry_its_uid(harness, tfu):
    from tf_operator.apis.common.v1.types import JOB_UID_LABEL

    job = harness.add_job(tfu.new_tfjob(worker=2))
    harness.sync(job)
    created = harness.created("pods")
    assert [p["metadata"]["labels"][JOB_UID_LABEL] for p in created] == [job["metadata"]["uid"]] * 2
    # services are not runs: they carry no uid (an earlier job's serves the new one too)
    assert harness.created("services") and all(
        JOB_UID_LABEL not in s["metadata"]["labels"] for s in harness.created("services")
    )


def test_a_pod_of_the_job_itself_is_counted(harness, tfu):
    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.add_pod(tfu.new_pod(job, "worker", 0, "Succeeded"))
    harness.sync(job)
    assert harness.deleted("pods") == []
    assert ("Succeeded", "True", "TFJobSucceeded") in harness.conditions(job)


@pytest.mark.parametrize("index", [None, "x", "a1"])
def test_a_pod_without_a_valid_index_is_deleted_and_replaced(harness, tfu, index):
    """The index label of a running worker removed or mangled: the pod is deleted (Warning
    InvalidReplicaIndex) and created again once gone; the other missing workers are created
    meanwhile (v0.5.3 tried to create it on every pass and met AlreadyExists for good)."""
    job = harness.add_job(tfu.new_tfjob(worker=3))
    harness.add_pod(tfu.new_pod(job, "worker", 0, "Running"))
    mislabelled = tfu.new_pod(job, "worker", 1, "Running")
    if index is None:
        del mislabelled["metadata"]["labels"]["tf-replica-index"]
    else:
        mislabelled["metadata"]["labels"]["tf-replica-index"] = index
    harness.add_pod(mislabelled)
    harness.sync(job)
    assert harness.deleted("pods") == ["test-tfjob-worker-1"]
    assert [p["metadata"]["name"] for p in harness.created("pods")] == ["test-tfjob-worker-2"]
    assert any(
        e.startswith("Warning InvalidReplicaIndex Deleting pod test-tfjob-worker-1")
        for e in harness.recorder.events
    )
    _uncache(harness, "test-tfjob-worker-1")
    _next_pass(harness, job)
    assert [p["metadata"]["name"] for p in harness.created("pods")] == ["test-tfjob-worker-1"]


def test_an_already_existing_name_does_not_stop_the_other_creates(harness, tfu):
    """A pod of another owner holds worker-1's name: that create fails (and the job is
    retried with backoff), but the slow start goes on to the workers after it."""
    job = harness.add_job(tfu.new_tfjob(worker=4))
    other = harness.add_job(tfu.new_tfjob(worker=1, name="other"))
    squatter = tfu.new_pod(other, "worker", 0, "Running", name="test-tfjob-worker-1")
    harness.add_pod(squatter, cache=False)
    harness.sync(job)
    created = [p["metadata"]["name"] for p in harness.created("pods")]
    assert created == [f"test-tfjob-worker-{i}" for i in range(4)]  # 1 was tried, and failed
    stored = {p["metadata"]["name"] for p in harness.client.resource(PODS).list()["items"]}
    assert {"test-tfjob-worker-0", "test-tfjob-worker-2", "test-tfjob-worker-3"} <= stored
    assert harness.ctr.work_queue.num_requeues("default/test-tfjob") == 1
    # the failed create lowered its expectation: only the three created ones are awaited
    assert harness.ctr.expectations.get("default/test-tfjob/worker/pods") == (3, 0)


def test_an_update_whose_uid_changed_drops_the_old_jobs_expectations(harness, tfu):
    """The job deleted and created again while the informer relisted arrives as an update:
    the ReplicaSet controller's rule makes it a delete and an add (D68)."""
    job = harness.add_job(tfu.new_tfjob(worker=2))
    key = "default/test-tfjob"
    harness.ctr.expectations.expect_creations(f"{key}/worker/pods", 2)
    harness.ctr.memory.remember(key, job["metadata"]["uid"])
    new = {**job, "metadata": {**job["metadata"], "uid": "another-uid", "resourceVersion": "999"}}
    harness.ctr.job_events.on_update(job, new)
    assert harness.ctr.expectations.get(f"{key}/worker/pods") is None
    assert harness.ctr.work_queue.get() == (key, False)
    assert not harness.ctr.memory.forget(key)  # dropped already


def test_a_deleted_job_drops_its_expectations_at_once(harness, tfu):
    """A job deleted and re-created before a worker synced the key: the new one must not
    wait for the old one's creates."""
    job = harness.add_job(tfu.new_tfjob(worker=2))
    key = "default/test-tfjob"
    harness.ctr.expectations.expect_creations(f"{key}/worker/pods", 2)
    harness.ctr.job_events.on_delete(job)
    assert harness.ctr.expectations.get(f"{key}/worker/pods") is None
    assert harness.ctr.work_queue.get() == (key, False)


def test_a_pod_replaced_under_its_name_during_a_relist_is_a_delete_and_an_add(harness, tfu):
    """The new job's pod where the cache held the old job's (same deterministic name): the
    informer hands over an update whose UID changed; its creation must be observed."""
    old_job = harness.add_job(tfu.new_tfjob(worker=1))
    old_pod = tfu.new_pod(old_job, "worker", 0, "Running")
    old_pod["metadata"].update(uid="old-pod", resourceVersion="1")
    new_job = {**old_job, "metadata": {**old_job["metadata"], "uid": "new-job-uid"}}
    harness.cache_job(new_job)
    new_pod = tfu.new_pod(new_job, "worker", 0)
    new_pod["metadata"].update(uid="new-pod", resourceVersion="2")
    key = "default/test-tfjob/worker/pods"
    harness.ctr.expectations.expect_creations(key, 1)
    harness.ctr.pods.on_update(old_pod, new_pod)
    assert harness.ctr.expectations.satisfied_expectations(key)
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
