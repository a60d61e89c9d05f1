"""What the dashboard's pages show, and where it accepts requests from."""

import copy
from datetime import UTC, datetime

import pytest

from tf_operator.dashboard.views import job_detail, job_row, log_key

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
JOB = {
    "metadata": {"name": "j", "namespace": "ns", "creationTimestamp": "2026-01-01T11:59:00Z"},
    "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2}}},
    "status": {
        "conditions": [
            {"type": "Created", "status": "True", "lastTransitionTime": "2026-01-01T11:59:00Z"},
            {"type": "Running", "status": "True", "lastTransitionTime": "2026-01-01T11:59:30Z"},
        ],
        "replicaStatuses": {"Worker": {"active": 1, "failed": 1}},
        "startTime": "2026-01-01T11:59:10Z",
    },
}


def pod(phase: str, restarts: int = 0, uid: str = "u1") -> dict:
    return {
        "metadata": {"name": "j-worker-0", "uid": uid, "labels": {"tf-replica-type": "worker"}},
        "status": {"phase": phase, "containerStatuses": [{"restartCount": restarts}]},
    }


def test_job_row_sums_replica_counts():
    row = job_row(JOB, NOW)
    assert row == {
        "name": "j",
        "namespace": "ns",
        "kind": "TFJob",  # JOB names none: a TFJob, as the SDK reads it
        "plural": "tfjobs",
        "key": "tfjobs/j",
        "state": "Running",
        "replicas": "Worker=2",
        "active": 1,
        "succeeded": 0,
        "failed": 1,
        "age": "60s",
        "duration": "50s",
        "deleting": False,
        "managed_by": None,
        "queue": None,
        "restarts": None,
        "blocked": None,
    }


def test_job_row_shows_restart_budget_and_blocking_reason():
    from tf_operator.sdk.lifecycle import BLOCKED_PREFIX

    job = copy.deepcopy(JOB)
    job["spec"]["runPolicy"] = {"backoffLimit": 2}
    job["spec"]["lifecyclePolicy"] = {"startup": {}}
    job.setdefault("status", {})["exitCodeRestarts"] = {"count": 1}
    job["status"].setdefault("conditions", []).append(
        {"type": "Created", "status": "True", "message": f"x{BLOCKED_PREFIX}exceeded quota"}
    )
    row = job_row(job, NOW)
    assert (row["restarts"], row["blocked"]) == ("1/2", "exceeded quota")


def test_why_a_job_without_a_lifecycle_policy_is_blocked_is_shown_too():
    from tf_operator.sdk.lifecycle import BLOCKED_PREFIX

    job = copy.deepcopy(JOB)
    job.setdefault("status", {}).setdefault("conditions", []).append(
        {"type": "Created", "status": "True", "message": f"x{BLOCKED_PREFIX}minAvailable 10"}
    )
    row = job_row(job, NOW)
    assert (row["restarts"], row["blocked"]) == (None, "minAvailable 10")
    detail = job_detail(job, [], [], NOW)
    assert detail["lifecycle"] is None and detail["blocked"] == "minAvailable 10"


def test_job_detail_orders_conditions_and_formats_events():
    event = {"metadata": {}, "type": "Warning", "reason": "Boom", "message": "m", "count": 3,
             "lastTimestamp": "2026-01-01T11:59:50Z"}  # fmt: skip
    detail = job_detail(JOB, [pod("Running")], [event], NOW)
    assert [c["type"] for c in detail["conditions"]] == ["Created", "Running"]
    assert detail["events"] == [
        {"type": "Warning", "reason": "Boom", "message": "m", "count": 3, "age": "10s"}
    ]
    assert detail["replicas"][0].pod == "j-worker-0" and detail["replicas"][0].phase == "Running"


def test_suspended_queued_and_managed_elsewhere_jobs():
    suspended = {
        **JOB,
        "metadata": {**JOB["metadata"], "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
        "spec": {**JOB["spec"], "runPolicy": {"suspend": True}},
        "status": {"conditions": [{"type": "Suspended", "status": "True"}]},
    }
    detail = job_detail(suspended, [], [], NOW)
    assert detail["row"]["state"] == "Suspended" and detail["row"]["queue"] == "team-a"
    assert detail["suspension"] == "true (suspended: no pods)"
    assert detail["toggle"] == "resume"
    assert job_detail(JOB, [], [], NOW)["toggle"] == "suspend"
    elsewhere = {**JOB, "spec": {**JOB["spec"], "runPolicy": {"managedBy": "example.com/other"}}}
    detail = job_detail(elsewhere, [], [], NOW)
    assert detail["row"]["managed_by"] == "example.com/other" and detail["toggle"] is None
    assert detail["manager"].startswith("example.com/other (not this operator")
    done = {**JOB, "status": {"conditions": [{"type": "Succeeded", "status": "True"}]}}
    assert job_detail(done, [], [], NOW)["toggle"] is None  # a finished job stays as it is


def test_log_key_changes_with_each_container_run():
    assert log_key(pod("Pending")) is None  # nothing to read yet
    first = log_key(pod("Running"))
    assert first == ("j-worker-0", "u1", 0)
    assert log_key(pod("Running", restarts=1)) != first  # restarted in place
    assert log_key(pod("Running", uid="u2")) != first  # recreated under the same name


def test_a_pytorchjob_is_shown_by_its_own_fields_and_labels():
    job = {
        **JOB,
        "kind": "PyTorchJob",
        "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 2}}},
    }
    row = job_row(job, NOW)
    assert (row["kind"], row["plural"], row["key"]) == (
        "PyTorchJob",
        "pytorchjobs",
        "pytorchjobs/j",
    )
    assert row["replicas"] == "Master=1,Worker=2"
    master = {
        "metadata": {
            "name": "j-master-0",
            "uid": "u1",
            "labels": {"pytorch-replica-type": "master", "pytorch-replica-index": "0"},
        },
        "status": {
            "phase": "Succeeded",
            "containerStatuses": [
                {"name": "istio-proxy", "state": {"terminated": {"exitCode": 2}}},
                {"name": "pytorch", "state": {"terminated": {"exitCode": 0}}},
            ],
        },
    }
    (replica,) = job_detail(job, [master], [], NOW)["replicas"]
    # the kind's labels and container (pytorch, not the first container)
    assert (replica.replica_type, replica.index, replica.exit_code) == ("master", "0", 0)


def test_the_detail_carries_the_jobs_pod_group():
    from tf_operator.sdk.podgroup import PodGroupInfo

    group = PodGroupInfo("g", "scheduling.k8s.io/v1beta1", 2, "Scheduled")
    assert job_detail(JOB, [], [], NOW, group=group)["group"] is group
    assert job_detail(JOB, [], [], NOW)["group"] is None


@pytest.mark.parametrize(
    ("kind", "field", "label", "container", "replicas"),
    [
        ("XGBoostJob", "xgbReplicaSpecs", "xgboost", "xgboost", {"Master": 1, "Worker": 2}),
        ("JAXJob", "jaxReplicaSpecs", "jax", "jax", {"Worker": 3}),
        ("PaddleJob", "paddleReplicaSpecs", "paddle", "paddle", {"Master": 1, "Worker": 2}),
    ],
)
def test_each_v1_9_kind_is_shown_by_its_own_fields_and_labels(
    kind, field, label, container, replicas
):
    job = {**JOB, "kind": kind, "spec": {field: {t: {"replicas": n} for t, n in replicas.items()}}}
    row = job_row(job, NOW)
    plural = kind.lower() + "s"
    assert (row["kind"], row["plural"], row["key"]) == (kind, plural, f"{plural}/j")
    assert row["replicas"] == ",".join(f"{t}={n}" for t, n in replicas.items())
    worker = {
        "metadata": {
            "name": "j-worker-1",
            "uid": "u1",
            "labels": {f"{label}-replica-type": "worker", f"{label}-replica-index": "1"},
        },
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {"name": "sidecar", "state": {"terminated": {"exitCode": 0}}},
                {"name": container, "state": {"terminated": {"exitCode": 3}}},
            ],
        },
    }
    (replica,) = job_detail(job, [worker], [], NOW)["replicas"]
    assert (replica.replica_type, replica.index, replica.exit_code) == ("worker", "1", 3)
