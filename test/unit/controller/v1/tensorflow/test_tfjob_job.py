"""Ported from v0.5.3's job_test.go (every row) plus its divergences (docs/divergences.md)."""

import pytest


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
