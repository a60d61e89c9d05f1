"""Ported from v0.5.3's status_test.go (TestFailed, every TestStatus row) plus condition fixes."""

from datetime import timedelta

import pytest

from tf_operator.apis.common.v1.types import JobStatus
from tf_operator.apis.tensorflow.v1.defaults import set_defaults_tfjob
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.pod import ReplicaTally, count_pod, reset_counts
from tf_operator.common.jobcontroller.status import (
    is_failed,
    is_succeeded,
    update_job_conditions,
)
from tf_operator.logger import logger_for_job


def _job(tfu, worker, ps, chief=0, **spec):
    job = TFJob.from_dict(tfu.new_tfjob(worker, ps, chief=chief, **spec))
    job.metadata.update(uid="u")
    set_defaults_tfjob(job)
    return job


def _context(job, tfu):
    return SyncContext(
        "default/test-tfjob", job, tfu.START, logger_for_job(job.to_dict(), job.kind)
    )


def _set_counts(job, rtype, failed, succeeded, active):
    for phase, count in (("Failed", failed), ("Succeeded", succeeded), ("Running", active)):
        for _ in range(count):
            count_pod(job, rtype, phase)


def test_failed(harness, tfu):
    job = _job(tfu, 3, 0)
    reset_counts(job, "Worker")
    count_pod(job, "Worker", "Failed")
    assert job.status.replica_statuses["Worker"].failed == 1
    ctx = _context(job, tfu)
    harness.ctr.status.update_replica_type(ctx, "Worker", 3, ReplicaTally())
    assert any(c.type == "Failed" for c in job.status.conditions)
    assert ctx.events == [
        ("Normal", "TFJobFailed", "TFJob test-tfjob has failed because 1 Worker replica(s) failed.")
    ]


# description: (worker, ps, chief?), PS (failed, succeeded, active), Worker (...), Chief (...),
# restart, worker0Completed, expected condition type
STATUS_ROWS = {
    "Chief worker is succeeded": (
        (1, 0, 1),
        (0, 0, 0),
        (0, 1, 0),
        (0, 1, 0),
        False,
        False,
        "Succeeded",
    ),
    "Chief worker is running": (
        (1, 0, 1),
        (0, 0, 0),
        (0, 0, 0),
        (0, 0, 1),
        False,
        False,
        "Running",
    ),
    "Chief worker is failed": ((1, 0, 1), (0, 0, 0), (0, 0, 0), (1, 0, 0), False, False, "Failed"),
    "(No chief worker) Worker is failed": (
        (1, 0, 0),
        (0, 0, 0),
        (1, 0, 0),
        (0, 0, 0),
        False,
        False,
        "Failed",
    ),
    "(No chief worker) Worker is succeeded": (
        (1, 0, 0),
        (0, 0, 0),
        (0, 1, 0),
        (0, 0, 0),
        False,
        False,
        "Succeeded",
    ),
    "(No chief worker) Worker is running": (
        (1, 0, 0),
        (0, 0, 0),
        (0, 0, 1),
        (0, 0, 0),
        False,
        False,
        "Running",
    ),
    "(No chief worker) 2 workers are succeeded, 2 workers are active": (
        (4, 2, 0),
        (0, 0, 2),
        (0, 2, 2),
        (0, 0, 0),
        False,
        False,
        "Running",
    ),
    "(No chief worker) 2 workers are running, 2 workers are failed": (
        (4, 2, 0),
        (0, 0, 2),
        (2, 0, 2),
        (0, 0, 0),
        False,
        False,
        "Failed",
    ),
    "(No chief worker) 2 workers are succeeded, 2 workers are failed": (
        (4, 2, 0),
        (0, 0, 2),
        (2, 2, 0),
        (0, 0, 0),
        False,
        False,
        "Failed",
    ),
    "(No chief worker) worker-0 are succeeded, 3 workers are active": (
        (4, 2, 0),
        (0, 0, 2),
        (0, 1, 3),
        (0, 0, 0),
        False,
        True,
        "Succeeded",
    ),
    "Chief is running, workers are failed": (
        (4, 2, 1),
        (0, 0, 2),
        (4, 0, 0),
        (0, 0, 1),
        False,
        False,
        "Running",
    ),
    "Chief is running, workers are succeeded": (
        (4, 2, 1),
        (0, 0, 2),
        (0, 4, 0),
        (0, 0, 1),
        False,
        False,
        "Running",
    ),
    "Chief is running, a PS is failed": (
        (4, 2, 1),
        (1, 0, 1),
        (0, 4, 0),
        (0, 0, 1),
        False,
        False,
        "Failed",
    ),
    "Chief is failed, workers are succeeded": (
        (4, 2, 1),
        (0, 0, 2),
        (0, 4, 0),
        (1, 0, 0),
        False,
        False,
        "Failed",
    ),
    "Chief is succeeded, workers are failed": (
        (4, 2, 1),
        (0, 0, 2),
        (4, 0, 0),
        (0, 1, 0),
        False,
        False,
        "Succeeded",
    ),
    "Chief is failed and restarting": (
        (4, 2, 1),
        (0, 0, 2),
        (4, 0, 0),
        (1, 0, 0),
        True,
        False,
        "Restarting",
    ),
}


# training-operator v1.9's rows for its spec fields (its status_test.go), and its dynamic
# workers: spec fields, then a row as above
V1_9_STATUS_ROWS = {
    "(No chief worker, successPolicy: AllWorkers) worker-0 are succeeded, 3 workers are active": (
        {"successPolicy": "AllWorkers"},
        ((4, 0, 0), (0, 0, 0), (0, 1, 3), (0, 0, 0), False, True, "Running"),
    ),
    "(No chief worker, successPolicy: AllWorkers) 4 workers are succeeded": (
        {"successPolicy": "AllWorkers"},
        ((4, 0, 0), (0, 0, 0), (0, 4, 0), (0, 0, 0), False, True, "Succeeded"),
    ),
    "(No chief worker, successPolicy: AllWorkers) worker-0 is succeeded, 2 workers are "
    "running, 1 worker is failed": (
        {"successPolicy": "AllWorkers"},
        ((4, 0, 0), (0, 0, 0), (1, 1, 2), (0, 0, 0), False, True, "Failed"),
    ),
    '(No chief worker, successPolicy: "") worker-0 are succeeded, 3 workers are active': (
        {"successPolicy": ""},
        ((4, 0, 0), (0, 0, 0), (0, 1, 3), (0, 0, 0), False, True, "Succeeded"),
    ),
    "(enableDynamicWorker) 2 workers are running, 2 workers are failed": (
        {"enableDynamicWorker": True},
        ((4, 2, 0), (0, 0, 2), (2, 0, 2), (0, 0, 0), False, False, "Running"),
    ),
    "(enableDynamicWorker) Chief is running, workers are failed": (
        {"enableDynamicWorker": True},
        ((4, 2, 1), (0, 0, 2), (4, 0, 0), (0, 0, 1), False, False, "Running"),
    ),
    "(enableDynamicWorker) a PS is failed": (
        {"enableDynamicWorker": True},
        ((4, 2, 0), (1, 0, 1), (0, 0, 4), (0, 0, 0), False, False, "Failed"),
    ),
}


@pytest.mark.parametrize(
    "fields, row",
    [*[({}, row) for row in STATUS_ROWS.values()], *V1_9_STATUS_ROWS.values()],
    ids=[*STATUS_ROWS, *V1_9_STATUS_ROWS],
)
def test_status(harness, tfu, fields, row):
    (worker, ps, chief), ps_c, worker_c, chief_c, restart, worker0, expected = row
    job = _job(tfu, worker, ps, chief, **fields)
    for rtype, counts in (("Worker", worker_c), ("Chief", chief_c), ("PS", ps_c)):
        reset_counts(job, rtype)
        _set_counts(job, rtype, *counts)
    ctx = _context(job, tfu)
    order = ["Chief", "Worker", "PS"] if chief else ["Worker", "PS"]
    for rtype in order:
        spec = job.spec.tf_replica_specs.get(rtype)
        if spec is None:
            continue
        failed = job.status.replica_statuses[rtype].failed
        restarting = failed if restart else 0
        # the rows' active pods are Running ones (D151: active also counts Pending pods)
        running = job.status.replica_statuses[rtype].active
        tally = ReplicaTally(restarting, restarting, worker0, running=running)
        harness.ctr.status.update_replica_type(ctx, rtype, spec.replicas, tally)
    assert expected in [c.type for c in job.status.conditions]
    if fields and expected == "Running":  # v1.9's rows: the job goes on
        assert not is_failed(job.status) and not is_succeeded(job.status)
    # filterOutConditionTest: no Running=True next to a terminal condition.
    if is_failed(job.status) or is_succeeded(job.status):
        assert not any(c.type == "Running" and c.status == "True" for c in job.status.conditions)
    # Succeeded and Failed are never both True (divergence D18).
    assert not (is_failed(job.status) and is_succeeded(job.status))


def _types(status):
    return [(c.type, c.status) for c in status.conditions]


def test_condition_algebra(tfu):
    t0 = tfu.START
    status = JobStatus()
    assert update_job_conditions(status, "Created", "TFJobCreated", "m", t0)
    assert update_job_conditions(status, "Running", "TFJobRunning", "r", t0)
    t1 = t0 + timedelta(seconds=10)
    # Unchanged Running keeps its times (divergence D19).
    assert not update_job_conditions(status, "Running", "TFJobRunning", "r", t1)
    assert status.conditions[1].last_update_time == t0
    assert update_job_conditions(status, "Restarting", "TFJobRestarting", "x", t1)
    assert _types(status) == [("Created", "True"), ("Restarting", "True")]
    assert update_job_conditions(status, "Running", "TFJobRunning", "r", t1)
    assert _types(status) == [("Created", "True"), ("Running", "True")]
    t2 = t1 + timedelta(seconds=10)
    assert update_job_conditions(status, "Failed", "TFJobFailed", "f", t2)
    assert _types(status) == [("Created", "True"), ("Running", "False"), ("Failed", "True")]
    assert status.conditions[1].last_transition_time == t2  # divergence D18: not stale
    # Terminal conditions are exclusive and final (divergence D18).
    assert not update_job_conditions(status, "Succeeded", "TFJobSucceeded", "s", t2)
    assert not update_job_conditions(status, "Running", "TFJobRunning", "r", t2)
    assert _types(status) == [("Created", "True"), ("Running", "False"), ("Failed", "True")]


def test_restarting_turns_false_on_failure(tfu):
    status = JobStatus()
    update_job_conditions(status, "Restarting", "TFJobRestarting", "x", tfu.START)
    update_job_conditions(status, "Failed", "TFJobFailed", "f", tfu.START)
    assert _types(status) == [("Restarting", "False"), ("Failed", "True")]


def test_status_conflict_goes_back_to_the_queue(harness, tfu):
    """A 409 is not re-applied over the live object (a pass on a stale cache could undo a
    terminal condition, D28): the sync fails, nothing is announced, the next sync writes."""
    from tf_operator.k8s.client import new_conflict

    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.add_pods(job, "worker", pending=1)
    harness.add_services(job, "worker", 1)
    calls = []

    def conflict_once(action):
        if action.subresource == "status" and not calls:
            calls.append(1)
            return True, new_conflict("tfjobs", "test-tfjob", "the object has been modified")
        return False, None

    harness.client.prepend_reactor("update", "tfjobs", conflict_once)
    with pytest.raises(Exception, match="modified"):
        harness.sync(job)
    assert harness.conditions(job) == []
    harness.sync(job)
    assert harness.actions("update", "tfjobs") == [
        ("update", "tfjobs", "test-tfjob"),
        ("update", "tfjobs", "test-tfjob"),
    ]
    assert harness.conditions(job) == [("Created", "True", "TFJobCreated")]


def test_events_and_metrics_held_back_when_status_write_fails(harness, tfu):
    from tf_operator.controller.v1.tensorflow import metrics
    from tf_operator.k8s.client import new_internal_error

    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.add_pods(job, "worker", succeeded=1)
    harness.add_services(job, "worker", 1)
    harness.client.prepend_reactor("update", "tfjobs", lambda a: (True, new_internal_error("x")))
    before = metrics.JOBS_SUCCESSFUL.get()
    with pytest.raises(Exception, match="x"):
        harness.sync(job)
    assert not any("TFJobSucceeded" in e for e in harness.recorder.events)
    assert metrics.JOBS_SUCCESSFUL.get() == before


def test_stale_cache_does_not_repeat_transitions_or_move_times(harness, tfu):
    """A sync on a cache that missed our last status write, even for longer than the wait
    for it (STATUS_WRITE_SEEN_TIMEOUT): nothing written, announced or overwritten; once the
    cache catches up, nothing is left to write."""
    from tf_operator.controller.v1.tensorflow import metrics

    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.add_pods(job, "worker", succeeded=1)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    first = harness.status(job)
    assert ("Succeeded", "True", "TFJobSucceeded") in harness.conditions(job)
    created, succeeded = metrics.JOBS_CREATED.get(), metrics.JOBS_SUCCESSFUL.get()
    events = list(harness.recorder.events)
    harness.sync(job)  # the cache still has the job without status: the pass waits
    assert harness.status(job) == first and harness.recorder.events == events
    harness.clock.step(60)
    harness.client.clear_actions()
    # Past the wait for our own write, but this process saw the job finish, so the pass
    # still waits for the cache (divergence D39; before, its write met a 409).
    harness.sync(job)
    assert harness.actions() == []
    assert harness.status(job) == first
    harness.cache_job(harness.stored_job(job))
    harness.client.clear_actions()
    harness.sync(job)
    assert harness.actions("update") == []
    assert harness.status(job) == first
    assert harness.recorder.events == events
    assert (metrics.JOBS_CREATED.get(), metrics.JOBS_SUCCESSFUL.get()) == (created, succeeded)
