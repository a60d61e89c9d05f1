"""Informer events that give a pass nothing to do queue none (D95, D96, D97), for every kind.

Each test shows the event that is now quiet beside the one like it that still queues the job,
so a rule that became too broad fails here as surely as one that stopped working."""

from __future__ import annotations

import copy

JOB_KEY = "default/test-tfjob"


def _version(obj: dict, version: str, **status: object) -> dict:
    obj = copy.deepcopy(obj)
    obj["metadata"]["resourceVersion"] = version
    if status:
        obj["status"] = {**(obj.get("status") or {}), **status}
    return obj


def _queued(harness) -> list[str]:
    """The keys waiting in the queue (taken and marked done), and those waiting for a delay."""
    queue, keys = harness.ctr.work_queue, []
    while len(queue):
        key, _ = queue.get()
        queue.done(key)
        keys.append(key)
    return keys + ["<delayed>"] * queue.pending_count()


# ---- D95: a create or delete observed while others of its replica type are in flight ------


def test_an_observed_create_queues_the_job_only_once_its_replica_type_has_all_it_expects(
    harness, k
):
    job = harness.add_job(k.new_job(worker=2))
    exp_key = f"{JOB_KEY}/worker/pods"
    harness.ctr.expectations.expect_creations(exp_key, 2)
    harness.ctr.pods.on_add(k.new_pod(job, "worker", 0))
    assert _queued(harness) == []  # its pass would only wait for the other create
    assert harness.sync(job) is False  # (and does: nothing is done)
    harness.ctr.pods.on_add(k.new_pod(job, "worker", 1))
    assert harness.ctr.expectations.satisfied_expectations(exp_key)
    assert _queued(harness) == [JOB_KEY]


def test_an_observed_delete_queues_the_job_only_once_its_replica_type_has_all_it_expects(
    harness, k
):
    job = harness.add_job(k.new_job(worker=2))
    pods = [k.new_pod(job, "worker", i) for i in range(2)]
    harness.ctr.expectations.expect_deletions(f"{JOB_KEY}/worker/pods", 2)
    harness.ctr.pods.on_delete(pods[0])
    assert _queued(harness) == []
    harness.ctr.pods.on_delete(pods[1])
    assert _queued(harness) == [JOB_KEY]


def test_a_finished_jobs_observed_creates_queue_it_at_once(harness, k):
    """A finished job's pass does not wait for its expectations, so each event counts."""
    job = harness.add_job(k.new_job(worker=2))
    harness.ctr.memory.mark_finished(JOB_KEY, job["metadata"]["uid"])
    harness.ctr.expectations.expect_creations(f"{JOB_KEY}/worker/pods", 2)
    harness.ctr.pods.on_add(k.new_pod(job, "worker", 0))
    assert _queued(harness) == [JOB_KEY]


# ---- D96: updates that change nothing a pass reads -------------------------------------


def test_an_update_of_nothing_but_the_resource_version_queues_no_pass(make_harness, k):
    harness = make_harness(pod_updates_batch_period=0)
    job = harness.add_job(k.new_job(worker=1))
    pod = k.new_pod(job, "worker", 0, "Pending")
    harness.ctr.pods.on_update(_version(pod, "1"), _version(pod, "2"))
    assert _queued(harness) == []
    harness.ctr.pods.on_update(_version(pod, "2"), _version(pod, "3", phase="Running"))
    assert _queued(harness) == [JOB_KEY]


def test_a_batched_update_of_a_job_already_queued_adds_no_timer(harness, k):
    """The pass already queued reads the cache after the update: no second pass a second
    later for it."""
    job = harness.add_job(k.new_job(worker=1))
    pod = k.new_pod(job, "worker", 0, "Pending")
    harness.ctr.work_queue.add(JOB_KEY)
    harness.ctr.pods.on_update(_version(pod, "1"), _version(pod, "2", phase="Running"))
    assert harness.ctr.work_queue.pending_count() == 0
    key, _ = harness.ctr.work_queue.get()  # taken: a pass is running on what it read
    harness.ctr.pods.on_update(_version(pod, "2"), _version(pod, "3", phase="Succeeded"))
    assert harness.ctr.work_queue.pending_count() == 1  # so this update gets its own
    harness.ctr.work_queue.done(key)


# ---- D97: our own status write, and a clean terminal branch ---------------------------


def _written_update(harness, job: dict) -> tuple[dict, dict]:
    """(the cached version our last write replaced, the version it made)."""
    return job, harness.stored_job(job)


def _job_with_pods(harness, k, leader_phase: str) -> dict:
    """A job of a leader (in ``leader_phase``) and a running worker, its services, synced."""
    job = harness.add_job(k.new_job(worker=1, leader=1, cleanPodPolicy="Running"))
    leader = k.leader.lower()
    harness.add_pods(job, leader, **{"active" if leader_phase == "Running" else "succeeded": 1})
    harness.add_pods(job, "worker", active=1)
    harness.add_services(job, leader, 1)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    return job


def test_the_update_of_our_own_status_write_queues_no_pass_unless_it_finished_the_job(harness, k):
    job = _job_with_pods(harness, k, "Running")  # writes Running
    _queued(harness)
    old, new = _written_update(harness, job)
    harness.ctr.job_events.on_update(old, new)
    assert _queued(harness) == []  # the pass that wrote it left nothing for it
    # someone else's write of the same job still queues it
    edited = _version(new, str(int(new["metadata"]["resourceVersion"]) + 1))
    edited["metadata"]["labels"] = {"edited": "yes"}
    harness.ctr.job_events.on_update(new, edited)
    assert _queued(harness) == [JOB_KEY]


def test_the_update_of_a_write_that_finished_the_job_queues_the_terminal_pass(harness, k):
    job = _job_with_pods(harness, k, "Succeeded")  # writes Succeeded: clean-up is the next pass's
    _queued(harness)
    old, new = _written_update(harness, job)
    harness.ctr.job_events.on_update(old, new)
    assert _queued(harness) == [JOB_KEY]


def test_a_pass_put_off_until_our_write_shows_makes_its_update_queue_the_job(harness, k):
    job = _job_with_pods(harness, k, "Running")  # the cache still holds the version replaced
    _queued(harness)
    harness.sync(job)  # a pod event's pass, put off (D47)
    old, new = _written_update(harness, job)
    harness.ctr.job_events.on_update(old, new)
    assert _queued(harness) == [JOB_KEY]


def test_after_a_clean_terminal_pass_the_deletions_it_issued_queue_nothing(harness, k):
    job = _job_with_pods(harness, k, "Succeeded")  # Succeeded
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)  # the terminal branch deletes the running worker and its service
    assert harness.deleted("pods") == harness.deleted("services") == ["test-tfjob-worker-0"]
    _queued(harness)
    worker = harness.pod_informer.get_indexer().get_by_key("default/test-tfjob-worker-0")
    harness.ctr.pods.on_delete(worker)
    assert harness.ctr.expectations.satisfied_expectations(f"{JOB_KEY}/worker/pods")
    assert _queued(harness) == []
    # a pass that did not end cleanly is waited for by the next one: deletions queue it
    harness.ctr.memory.set_cleaned(JOB_KEY, job["metadata"]["uid"], False)
    harness.ctr.pods.on_delete(worker)
    assert _queued(harness) == [JOB_KEY]
