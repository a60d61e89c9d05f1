"""Ported from v0.5.3's job_test.go (every row) plus its divergences (docs/divergences.md)."""

import pytest

from tf_operator.controller.v1.tensorflow import metrics


def _succeeded_status(tfu, completion=True):
    t = "2026-01-01T12:00:00Z"
    status = {
        "conditions": [
            {
                "type": "Succeeded",
                "status": "True",
                "reason": "TFJobSucceeded",
                "lastUpdateTime": t,
                "lastTransitionTime": t,
            }
        ]
    }
    if completion:
        status["completionTime"] = t
    return status


@pytest.fixture(params=["spec", "runPolicy"])
def placement(request):
    """Where the run-policy fields are written: on the spec (v0.5.3) or in spec.runPolicy
    (v1.9); the operator reads one normalised policy either way (D55)."""
    return request.param


def _running_job(harness, tfu, worker=4, ps=2, status=None, placement="spec", **spec):
    job = harness.add_job(tfu.new_tfjob(worker, ps, run_policy_in=placement, **spec), status=status)
    return job


def test_add_tfjob_enqueues(harness, tfu):
    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.ctr.job_events.on_add(job)
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)


# description: (policy, running workers, running ps, succeeded workers, succeeded ps) → deletions
DELETE_ROWS = {
    "4 workers and 2 ps is running, policy is all": ("All", 4, 2, 0, 0, 6),
    "4 workers and 2 ps is running, policy is running": ("Running", 4, 2, 0, 0, 6),
    "4 workers and 2 ps is succeeded, policy is running": ("Running", 0, 0, 4, 2, 0),
    "4 workers and 2 ps is succeeded, policy is None": ("None", 0, 0, 4, 2, 0),
}


@pytest.mark.parametrize("row", list(DELETE_ROWS.values()), ids=list(DELETE_ROWS))
def test_delete_pods_and_services(harness, tfu, row, placement):
    policy, run_w, run_ps, ok_w, ok_ps, deletions = row
    job = _running_job(
        harness, tfu, status=_succeeded_status(tfu), placement=placement, cleanPodPolicy=policy
    )
    harness.add_pods(job, "worker", active=run_w, succeeded=ok_w)
    harness.add_pods(job, "ps", active=run_ps, succeeded=ok_ps)
    harness.add_services(job, "worker", 4)
    harness.add_services(job, "ps", 2)
    assert harness.sync(job) is True
    assert len(harness.deleted("pods")) == deletions
    assert len(harness.deleted("services")) == deletions


def test_policy_all_deletes_services_without_pods(harness, tfu):
    # v0.5.3 returned early when no pod was left, leaking the services (divergence D17).
    job = _running_job(harness, tfu, status=_succeeded_status(tfu), cleanPodPolicy="All")
    harness.add_services(job, "worker", 4)
    harness.add_services(job, "ps", 2)
    harness.sync(job)
    assert len(harness.deleted("services")) == 6


def test_cleanup_deletes_what_the_cache_holds_by_uid_and_skips_the_terminating(harness, tfu):
    # v0.5.3 read each pod and service live before deleting it (divergence D52).
    job = _running_job(harness, tfu, status=_succeeded_status(tfu), cleanPodPolicy="All")
    harness.add_pods(job, "worker", active=2)
    terminating = harness.add_pod(tfu.new_pod(job, "ps", 0, "Running"), cache=False)
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    harness.pod_informer.get_indexer().add(terminating)  # as the informer saw it
    harness.sync(job)
    assert sorted(harness.deleted("pods")) == ["test-tfjob-worker-0", "test-tfjob-worker-1"]
    assert harness.actions("get") == []
    cached = harness.pod_informer.get_indexer().list()
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in cached}
    for action in harness.client.filter_actions("delete", "pods"):
        assert action.options["preconditions_uid"] == uids[action.name]


# description: ttl, seconds passed since completion → TFJob deleted
CLEANUP_ROWS = {
    "4 workers and 2 ps is running, TTLSecondsAfterFinished unset": (None, 0, False),
    "4 workers and 2 ps is running, TTLSecondsAfterFinished is 0": (0, 0, True),
    "4 workers and 2 ps is succeeded, TTLSecondsAfterFinished is 2": (2, 2, True),
}


@pytest.mark.parametrize("row", list(CLEANUP_ROWS.values()), ids=list(CLEANUP_ROWS))
def test_cleanup_tfjob(harness, tfu, row, placement):
    ttl, wait, expect_delete = row
    spec = {"cleanPodPolicy": "None"}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    job = _running_job(harness, tfu, status=_succeeded_status(tfu), placement=placement, **spec)
    harness.add_pods(job, "worker", active=4)
    harness.add_pods(job, "ps", active=2)
    harness.add_services(job, "worker", 4)
    harness.add_services(job, "ps", 2)
    harness.clock.step(wait)
    assert harness.sync(job) is True
    assert (harness.deleted("tfjobs") == ["test-tfjob"]) is expect_delete


def test_ttl_not_expired_requeues_at_expiry(harness, tfu, monkeypatch):
    calls = []
    monkeypatch.setattr(harness.ctr.work_queue, "add_after", lambda k, d: calls.append((k, d)))
    job = _running_job(harness, tfu, status=_succeeded_status(tfu), ttlSecondsAfterFinished=100)
    harness.clock.step(40)
    harness.sync(job)
    # v0.5.3 used AddRateLimited here: a ~5 ms hot loop (divergence D13).
    assert calls == [("default/test-tfjob", 60.0)]
    assert harness.deleted("tfjobs") == []


def test_ttl_without_completion_time_does_not_crash(harness, tfu):
    # v0.5.3 dereferenced the nil completionTime (divergence D14).
    job = _running_job(
        harness, tfu, status=_succeeded_status(tfu, completion=False), ttlSecondsAfterFinished=0
    )
    harness.sync(job)
    assert harness.deleted("tfjobs") == ["test-tfjob"]


def _deadline_status(tfu):
    return {"startTime": "2026-01-01T12:00:00Z", "conditions": None}


@pytest.mark.parametrize(
    "ads, deletions",
    [(None, 0), (2, 6)],
    ids=["ActiveDeadlineSeconds unset", "ActiveDeadlineSeconds is 2"],
)
def test_active_deadline_seconds(harness, tfu, ads, deletions, placement):
    spec = {"cleanPodPolicy": "All"}
    if ads is not None:
        spec["activeDeadlineSeconds"] = ads
    job = _running_job(harness, tfu, status=_deadline_status(tfu), placement=placement, **spec)
    harness.add_pods(job, "worker", active=4)
    harness.add_pods(job, "ps", active=2)
    harness.add_services(job, "worker", 4)
    harness.add_services(job, "ps", 2)
    harness.clock.step(2)
    harness.sync(job)
    assert len(harness.deleted("pods")) == deletions
    assert len(harness.deleted("services")) == deletions
    if ads is not None:
        msg = "TFJob test-tfjob has failed because it was active longer than specified deadline"
        # Kubernetes Job's reason; v0.5.3 said TFJobFailed (divergence D36).
        assert ("Failed", "True", "DeadlineExceeded") in harness.conditions(job)
        assert f"Normal DeadlineExceeded {msg}" in harness.recorder.events
        assert harness.status(job)["completionTime"] == "2026-01-01T12:00:02Z"


def test_deadline_kills_active_pods_whatever_the_policy(harness, tfu):
    # With cleanPodPolicy None v0.5.3 left pending/running pods of a failed job (divergence D16).
    job = _running_job(
        harness, tfu, status=_deadline_status(tfu), cleanPodPolicy="None", activeDeadlineSeconds=1
    )
    harness.add_pods(job, "worker", pending=1, active=2, succeeded=1)
    harness.add_services(job, "worker", 4)
    harness.clock.step(5)
    harness.sync(job)
    assert sorted(harness.deleted("pods")) == [
        "test-tfjob-worker-0",
        "test-tfjob-worker-1",
        "test-tfjob-worker-2",
    ]


def test_backoff_for_on_failure(harness, tfu, placement):
    job = tfu.new_tfjob(4, 2, run_policy_in=placement, backoffLimit=4, cleanPodPolicy="All")
    job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "OnFailure"
    job = harness.add_job(job)
    harness.add_pods(job, "worker", active=4, restart_counts=[1, 1, 1, 1])
    harness.add_pods(job, "ps", active=2, restart_counts=[1, 1])
    harness.add_services(job, "worker", 4)
    harness.add_services(job, "ps", 2)
    assert harness.sync(job) is True
    assert len(harness.deleted("pods")) == 6
    assert len(harness.deleted("services")) == 6
    msg = "TFJob test-tfjob has failed because it has reached the specified backoff limit"
    # Kubernetes Job's reason; v0.5.3 said TFJobFailed (divergence D36).
    assert f"Normal BackoffLimitExceeded {msg}" in harness.recorder.events
    assert ("Failed", "True", "BackoffLimitExceeded") in harness.conditions(job)


def test_backoff_counts_restarts_of_finished_pods(harness, tfu):
    # v0.5.3 only looked at Running/Pending pods (divergence D10).
    job = tfu.new_tfjob(2, backoffLimit=2)
    job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "OnFailure"
    job = harness.add_job(job)
    pod = tfu.new_pod(job, "worker", 0, "Succeeded")
    pod["status"]["containerStatuses"] = [{"name": "tensorflow", "restartCount": 2}]
    harness.add_pod(pod)
    harness.add_pod(tfu.new_pod(job, "worker", 1, "Pending"))
    harness.sync(job)
    assert ("Failed", "True", "BackoffLimitExceeded") in harness.conditions(job)


def test_backoff_counts_exit_code_recreations(harness, tfu):
    job = tfu.new_tfjob(1, backoffLimit=1)
    job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    job = harness.add_job(job)
    pod = tfu.new_pod(job, "worker", 0, "Failed")
    pod["status"]["containerStatuses"] = [
        {"name": "tensorflow", "state": {"terminated": {"exitCode": 137}}}
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


def test_terminal_job_is_not_rewritten_or_reannounced(harness, tfu):
    job = _running_job(
        harness, tfu, status=_deadline_status(tfu), cleanPodPolicy="All", activeDeadlineSeconds=1
    )
    harness.clock.step(5)
    before = metrics.JOBS_FAILED.get()
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    harness.client.clear_actions()
    harness.clock.step(5)
    harness.sync(job)
    # v0.5.3 re-emitted TFJobFailed and wrote the status on every pass (divergence D15).
    assert harness.actions("update") == []
    assert sum("DeadlineExceeded" in e for e in harness.recorder.events) == 1
    assert metrics.JOBS_FAILED.get() == before + 1


def test_succeeded_folds_active_into_succeeded(harness, tfu):
    job = _running_job(
        harness,
        tfu,
        status={
            **_succeeded_status(tfu),
            "replicaStatuses": {"Worker": {"active": 1, "succeeded": 3}},
        },
        cleanPodPolicy="None",
    )
    harness.sync(job)
    assert harness.status(job)["replicaStatuses"]["Worker"] == {"succeeded": 4}


def test_sync_requeues_at_the_deadline(harness, tfu, monkeypatch):
    """v0.5.3 armed the deadline in its update handler (decoding both objects); each reconcile
    of a started job arms it here, so an edited deadline and a restarted operator both re-sync
    at the right time (divergence D7)."""
    calls = []
    monkeypatch.setattr(harness.ctr.work_queue, "add_after", lambda k, d: calls.append((k, d)))
    job = harness.add_job(
        tfu.new_tfjob(1, activeDeadlineSeconds=50), status={"startTime": "2026-01-01T12:00:00Z"}
    )
    harness.add_pods(job, "worker", active=1)
    harness.add_services(job, "worker", 1)
    harness.clock.step(20)
    harness.sync(job)
    assert calls == [("default/test-tfjob", 30.0)]


def test_update_handler_only_enqueues(harness, tfu):
    old = harness.add_job(tfu.new_tfjob(1))
    new = dict(old, spec={**old["spec"], "activeDeadlineSeconds": 50})
    harness.ctr.job_events.on_update(old, new)
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
    assert len(harness.ctr.work_queue) == 0


def test_resync_of_a_finished_job_is_not_queued(harness, tfu):
    """v0.5.3 synced every job at each 30 s resync; a finished one has nothing left to do
    and is not queued (divergence D45); an unfinished one still is."""
    running = harness.add_job(tfu.new_tfjob(1))
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


def test_delete_handler_accepts_tombstones(harness, tfu):
    from tf_operator.k8s.cache import DeletedFinalStateUnknown

    job = harness.add_job(tfu.new_tfjob(1))
    handler = harness.ctr.job_events.event_handler()
    handler.on_delete(DeletedFinalStateUnknown("default/test-tfjob", job))
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
