"""The job controller's sync for every kind, ported from v0.5.3's controller_test.go
(TestNormalPath, every row) plus sync-level fixes (D1, D19, D20, D47, D53).

v0.5.3's rows have PS replicas beside the workers; a PyTorchJob's rows have its Master there
instead, and the Master decides (a running or succeeded worker does not make the job Running or
Succeeded while the Master is missing). v0.5.3's own counter of deleted jobs stays with the
TFJob tests (``unit/controller/v1/tensorflow/test_tfjob_controller.py``)."""

import logging

import pytest

from support.jobkinds import PYTORCHJOB_CASE, TFJOB_CASE
from tf_operator.controller.v1.metrics import JOBS_DELETED

# workers, the other type's | pending/active/succeeded/failed workers | same for the other type
# | worker svcs, the other's | expected pod creations, pod deletions, service creations |
# expected worker active/succeeded/failed | the other's | condition | start time checked
NORMAL_PATH = {
    TFJOB_CASE: ("PS", {
        "Local TFJob is created":
            ((1, 0), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0), (1, 0, 1), (0, 0, 0), (0, 0, 0), None, False),
        "Distributed TFJob (4 workers, 2 PS) is created":
            ((4, 2), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0), (6, 0, 6), (0, 0, 0), (0, 0, 0), None, False),
        "Distributed TFJob (4 workers, 2 PS) is created and all replicas are pending":
            ((4, 2), (4, 0, 0, 0), (2, 0, 0, 0), (4, 2), (0, 0, 0), (0, 0, 0), (0, 0, 0), None, False),
        "Distributed TFJob (4 workers, 2 PS) is created and all replicas are running":
            ((4, 2), (0, 4, 0, 0), (0, 2, 0, 0), (4, 2), (0, 0, 0), (4, 0, 0), (2, 0, 0), "Running", True),
        "Distributed TFJob (4 workers, 2 PS) is created, 2 workers, 1 PS are pending":
            ((4, 2), (2, 0, 0, 0), (1, 0, 0, 0), (2, 1), (3, 0, 3), (0, 0, 0), (0, 0, 0), None, False),
        "... 2 workers, 1 PS are pending, 1 worker is running":
            ((4, 2), (2, 1, 0, 0), (1, 0, 0, 0), (3, 1), (2, 0, 2), (1, 0, 0), (0, 0, 0), "Running", False),
        "... 2 workers, 1 PS are pending, 1 worker is succeeded":
            ((4, 2), (2, 0, 1, 0), (1, 0, 0, 0), (3, 1), (2, 0, 2), (0, 1, 0), (0, 0, 0), None, False),
        "Distributed TFJob (4 workers, 2 PS) is succeeded":
            ((4, 2), (0, 0, 4, 0), (0, 0, 2, 0), (4, 2), (0, 0, 0), (0, 4, 0), (0, 2, 0), "Succeeded", False),
    }),
    PYTORCHJOB_CASE: ("Master", {
        "Local PyTorchJob is created":
            ((1, 0), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0), (1, 0, 1), (0, 0, 0), (0, 0, 0), None, False),
        "Distributed PyTorchJob (4 workers, a Master) is created":
            ((4, 1), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0), (5, 0, 5), (0, 0, 0), (0, 0, 0), None, False),
        "Distributed PyTorchJob (4 workers, a Master) is created and all replicas are pending":
            ((4, 1), (4, 0, 0, 0), (1, 0, 0, 0), (4, 1), (0, 0, 0), (0, 0, 0), (0, 0, 0), None, False),
        "Distributed PyTorchJob (4 workers, a Master) is created and all replicas are running":
            ((4, 1), (0, 4, 0, 0), (0, 1, 0, 0), (4, 1), (0, 0, 0), (4, 0, 0), (1, 0, 0), "Running", True),
        "Distributed PyTorchJob (4 workers, a Master) is created, 2 workers are pending":
            ((4, 1), (2, 0, 0, 0), (0, 0, 0, 0), (2, 0), (3, 0, 3), (0, 0, 0), (0, 0, 0), None, False),
        "... 2 workers are pending, 1 worker is running, no Master yet":
            ((4, 1), (2, 1, 0, 0), (0, 0, 0, 0), (3, 0), (2, 0, 2), (1, 0, 0), (0, 0, 0), None, False),
        "... 2 workers are pending, 1 worker is succeeded, no Master yet":
            ((4, 1), (2, 0, 1, 0), (0, 0, 0, 0), (3, 0), (2, 0, 2), (0, 1, 0), (0, 0, 0), None, False),
        "Distributed PyTorchJob (4 workers, a Master) is succeeded":
            ((4, 1), (0, 0, 4, 0), (0, 0, 1, 0), (4, 1), (0, 0, 0), (0, 4, 0), (0, 1, 0), "Succeeded", False),
    }),
}  # fmt: skip
NORMAL_PATH_ROWS = [
    pytest.param(case, other, row, id=f"{case.name}-{title}")
    for case, (other, rows) in NORMAL_PATH.items()
    for title, row in rows.items()
]
# Per kind: a first pass's job and the type its replica order puts before the workers (D20).
FIRST_SYNC = {
    "tfjob": ({"Worker": 2, "PS": 1}, "ps"),
    "pytorchjob": ({"Master": 1, "Worker": 2}, "master"),
    "paddlejob": ({"Master": 1, "Worker": 2}, "master"),
}


@pytest.mark.parametrize("k, other, row", NORMAL_PATH_ROWS)
def test_normal_path(harness, k, other, row):
    (worker, others), wpods, opods, (wsvc, osvc), creations, wexp, oexp, cond, check_start = row
    job = harness.add_job(k.new_job_with({"Worker": worker, other: others}))
    harness.add_pods(job, "worker", *wpods)
    harness.add_pods(job, other.lower(), *opods)
    harness.add_services(job, "worker", wsvc)
    harness.add_services(job, other.lower(), osvc)

    forget = harness.sync(job)

    pod_creations, pod_deletions, service_creations = creations
    # a pass that hands creates to the helpers keeps the key's backoff until they are seen
    assert forget is (pod_creations + service_creations == 0)
    assert len(harness.created("pods")) == pod_creations
    assert len(harness.deleted("pods")) == pod_deletions
    assert len(harness.created("services")) == service_creations
    for pod in harness.created("pods"):
        assert pod["metadata"]["ownerReferences"] == [k.owner_ref(job)]
    status = harness.status(job)
    counts = status["replicaStatuses"]
    for rtype, (active, succeeded, failed) in (("Worker", wexp), (other, oexp)):
        got = counts.get(rtype, {})
        assert (got.get("active", 0), got.get("succeeded", 0), got.get("failed", 0)) == (
            active,
            succeeded,
            failed,
        )
    if check_start:
        assert status["startTime"] == "2026-01-01T12:00:00Z"
    conditions = harness.conditions(job)
    if cond is not None:
        assert (cond, "True", f"{k.kind_name}{cond}") in conditions
    else:
        assert [c for c in conditions if c[0] in ("Running", "Succeeded")] == []
    assert conditions[0] == ("Created", "True", f"{k.kind_name}Created")


def test_first_sync_exact_actions(harness, k):
    replicas, first = FIRST_SYNC[k.name]
    job = harness.add_job(k.new_job_with(replicas))
    harness.sync(job)
    assert harness.actions() == [
        ("create", "pods", f"test-tfjob-{first}-0"),
        ("create", "services", f"test-tfjob-{first}-0"),
        ("create", "pods", "test-tfjob-worker-0"),
        ("create", "pods", "test-tfjob-worker-1"),
        ("create", "services", "test-tfjob-worker-0"),
        ("create", "services", "test-tfjob-worker-1"),
        ("update", k.resource.plural, "test-tfjob"),
    ]
    names = [p["metadata"]["name"] for p in harness.created("pods")]
    assert names == [f"test-tfjob-{first}-0", "test-tfjob-worker-0", "test-tfjob-worker-1"]
    assert harness.client.actions[-1].subresource == "status"
    assert harness.recorder.events[:2] == [
        f"Normal SuccessfulCreatePod Created pod: test-tfjob-{first}-0",
        f"Normal SuccessfulCreateService Created service: test-tfjob-{first}-0",
    ]


def test_unchanged_status_is_not_written(harness, k):
    job = harness.add_job(k.new_job(1))
    harness.add_pods(job, "worker", active=1)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    assert harness.actions() == [("update", k.resource.plural, "test-tfjob")]
    harness.cache_job(harness.stored_job(job))
    harness.client.clear_actions()
    harness.clock.step(30)
    harness.sync(job)
    # v0.5.3 refreshed the Running condition's lastUpdateTime and wrote every pass (divergence D19).
    assert harness.actions() == []


def test_deleted_job_drops_its_expectations_and_counts_once(harness, k):
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    assert harness.ctr.expectations.get("default/test-tfjob/worker/pods") == (1, 0)
    harness.job_informer.get_indexer().delete(job)
    before = JOBS_DELETED.labels(k.framework).get()
    assert harness.sync(job) is True
    harness.sync(job)
    assert JOBS_DELETED.labels(k.framework).get() == before + 1
    assert len(harness.ctr.expectations) == 0


def test_invalid_key(harness):
    with pytest.raises(ValueError):
        harness.ctr.sync("a/b/c")


def test_sync_with_missing_namespace_raises(harness):
    with pytest.raises(ValueError, match="either namespace or name is missing"):
        harness.ctr.sync("onlyname")


def test_a_pass_with_creates_in_flight_ends_before_decoding_the_job(harness, k, monkeypatch):
    job = harness.add_job(k.new_job(2))
    pending = harness.ctr.services.expectation_key("default/test-tfjob", "Worker")
    harness.ctr.expectations.expect_creations(pending)
    decoded = []
    decode = harness.ctr.edits.decode
    monkeypatch.setattr(
        harness.ctr.edits, "decode", lambda raw, now: decoded.append(raw) or decode(raw, now)
    )
    assert harness.sync(job) is False  # not forgotten: the create may still fail
    assert decoded == [] and harness.actions() == []
    harness.ctr.expectations.creation_observed(pending)
    harness.sync(job)
    assert len(decoded) == 1 and harness.actions("create", "pods")


def test_a_pass_that_only_waits_is_logged_at_debug_one_that_reconciles_at_info(harness, k, caplog):
    caplog.set_level(logging.DEBUG, logger="tf_operator")
    job = harness.add_job(k.new_job(1))
    pending = harness.ctr.pods.expectation_key("default/test-tfjob", "Worker")
    harness.ctr.expectations.expect_creations(pending)
    harness.sync(job)
    harness.ctr.expectations.creation_observed(pending)
    harness.sync(job)
    finished = [r.levelno for r in caplog.records if r.getMessage().startswith("Finished syncing")]
    assert finished == [logging.DEBUG, logging.INFO]
