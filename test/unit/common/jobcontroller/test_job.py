"""Every kind's TTL, backoff, deadline and terminal passes, ported from v0.5.3's job_test.go
and its divergences (D7, D10, D13, D14, D15, D45); v0.5.3's clean-up tables, with their PS
replicas, stay with the TFJob tests (``unit/controller/v1/tensorflow/test_tfjob_job.py``)."""

from tf_operator.controller.v1.metrics import JOBS_FAILED


def _succeeded_status(k, completion=True):
    t = "2026-01-01T12:00:00Z"
    status = {
        "conditions": [
            {
                "type": "Succeeded",
                "status": "True",
                "reason": f"{k.kind_name}Succeeded",
                "lastUpdateTime": t,
                "lastTransitionTime": t,
            }
        ]
    }
    if completion:
        status["completionTime"] = t
    return status


def _deadline_status(k):
    return {"startTime": "2026-01-01T12:00:00Z", "conditions": None}


def _running_job(harness, k, worker=4, status=None, **spec):
    return harness.add_job(k.new_job(worker, **spec), status=status)


def test_ttl_not_expired_requeues_at_expiry(harness, k, monkeypatch):
    calls = []
    monkeypatch.setattr(harness.ctr.work_queue, "add_after", lambda k, d: calls.append((k, d)))
    job = _running_job(harness, k, status=_succeeded_status(k), ttlSecondsAfterFinished=100)
    harness.clock.step(40)
    harness.sync(job)
    # v0.5.3 used AddRateLimited here: a ~5 ms hot loop (divergence D13).
    assert calls == [("default/test-tfjob", 60.0)]
    assert harness.deleted(k.resource.plural) == []


def test_ttl_without_completion_time_does_not_crash(harness, k):
    # v0.5.3 dereferenced the nil completionTime (divergence D14).
    job = _running_job(
        harness, k, status=_succeeded_status(k, completion=False), ttlSecondsAfterFinished=0
    )
    harness.sync(job)
    assert harness.deleted(k.resource.plural) == ["test-tfjob"]


def test_backoff_counts_restarts_of_finished_pods(harness, k):
    # v0.5.3 only looked at Running/Pending pods (divergence D10).
    job = k.new_job(2, backoffLimit=2)
    job["spec"][k.specs_field]["Worker"]["restartPolicy"] = "OnFailure"
    job = harness.add_job(job)
    pod = k.new_pod(job, "worker", 0, "Succeeded")
    pod["status"]["containerStatuses"] = [{"name": k.container, "restartCount": 2}]
    harness.add_pod(pod)
    harness.add_pod(k.new_pod(job, "worker", 1, "Pending"))
    harness.sync(job)
    assert ("Failed", "True", "BackoffLimitExceeded") in harness.conditions(job)


def test_backoff_counts_exit_code_recreations(harness, k):
    job = k.new_job(1, backoffLimit=1)
    job["spec"][k.specs_field]["Worker"]["restartPolicy"] = "ExitCode"
    job = harness.add_job(job)
    pod = k.new_pod(job, "worker", 0, "Failed")
    pod["status"]["containerStatuses"] = [
        {"name": k.container, "state": {"terminated": {"exitCode": 137}}}
    ]
    stored = harness.add_pod(pod)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    assert harness.deleted("pods") == ["test-tfjob-worker-0"]
    # The informer reports the deletion; the next pass sees the budget used up (divergence D10).
    harness.pod_informer.get_indexer().delete(stored)
    harness.ctr.pods.on_delete(stored)
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert ("Failed", "True", "BackoffLimitExceeded") in harness.conditions(job)
    assert harness.created("pods") == []


def test_terminal_job_is_not_rewritten_or_reannounced(harness, k):
    job = _running_job(
        harness, k, status=_deadline_status(k), cleanPodPolicy="All", activeDeadlineSeconds=1
    )
    harness.clock.step(5)
    before = JOBS_FAILED.labels(k.framework).get()
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    harness.client.clear_actions()
    harness.clock.step(5)
    harness.sync(job)
    # v0.5.3 re-emitted TFJobFailed and wrote the status on every pass (divergence D15).
    assert harness.actions("update") == []
    assert sum("DeadlineExceeded" in e for e in harness.recorder.events) == 1
    assert JOBS_FAILED.labels(k.framework).get() == before + 1


def test_succeeded_folds_active_into_succeeded(harness, k):
    job = _running_job(
        harness,
        k,
        status={
            **_succeeded_status(k),
            "replicaStatuses": {"Worker": {"active": 1, "succeeded": 3}},
        },
        cleanPodPolicy="None",
    )
    harness.sync(job)
    assert harness.status(job)["replicaStatuses"]["Worker"] == {"succeeded": 4}


def test_sync_requeues_at_the_deadline(harness, k, monkeypatch):
    """v0.5.3 armed the deadline in its update handler (decoding both objects); each reconcile
    of a started job arms it here, so an edited deadline and a restarted operator both re-sync
    at the right time (divergence D7)."""
    calls = []
    monkeypatch.setattr(harness.ctr.work_queue, "add_after", lambda k, d: calls.append((k, d)))
    job = harness.add_job(
        k.new_job(1, activeDeadlineSeconds=50), status={"startTime": "2026-01-01T12:00:00Z"}
    )
    harness.add_pods(job, "worker", active=1)
    harness.add_services(job, "worker", 1)
    harness.clock.step(20)
    harness.sync(job)
    assert calls == [("default/test-tfjob", 30.0)]


def test_update_handler_only_enqueues(harness, k):
    old = harness.add_job(k.new_job(1))
    new = dict(old, spec={**old["spec"], "activeDeadlineSeconds": 50})
    harness.ctr.job_events.on_update(old, new)
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
    assert len(harness.ctr.work_queue) == 0


def test_resync_of_a_finished_job_is_not_queued(harness, k):
    """v0.5.3 synced every job at each 30 s resync; a finished one has nothing left to do
    and is not queued (divergence D45); an unfinished one still is."""
    running = harness.add_job(k.new_job(1))
    harness.ctr.job_events.on_update(running, running)
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
    harness.ctr.work_queue.done("default/test-tfjob")
    for cond_type, status, queued in (("Succeeded", "True", 0), ("Failed", "True", 0)):
        done = dict(running, status={"conditions": [{"type": cond_type, "status": status}]})
        harness.ctr.job_events.on_update(done, done)
        assert len(harness.ctr.work_queue) == queued
    finished = dict(running, status={"conditions": [{"type": "Succeeded", "status": "True"}]})
    edited = dict(finished, metadata={**finished["metadata"], "resourceVersion": "999"})
    harness.ctr.job_events.on_update(finished, edited)  # a real change is still seen
    assert len(harness.ctr.work_queue) == 1


def test_delete_handler_accepts_tombstones(harness, k):
    from tf_operator.k8s.cache import DeletedFinalStateUnknown

    job = harness.add_job(k.new_job(1))
    handler = harness.ctr.job_events.event_handler()
    handler.on_delete(DeletedFinalStateUnknown("default/test-tfjob", job))
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
