"""How a TFJob is summarised for people (``tf_operator.sdk.summary``)."""

import pytest

from tf_operator.sdk.summary import human_duration


def test_human_duration_like_kubectl():
    assert [
        human_duration(s) for s in (0, 59, 119, 192, 3600, 3 * 3600 + 300, 90000, 3 * 86400 + 7200)
    ] == [
        "0s",
        "59s",
        "119s",
        "3m12s",
        "60m",
        "3h5m",
        "25h",
        "3d2h",
    ]


def test_a_suspended_job_has_no_running_duration():
    from datetime import UTC, datetime

    from tf_operator.sdk.summary import duration

    now = datetime(2026, 1, 1, 12, 0, 30, tzinfo=UTC)
    running = {"status": {"startTime": "2026-01-01T12:00:00Z", "conditions": []}}
    assert duration(running, now) == "30s"
    suspended = {"status": {**running["status"], "conditions": [
        {"type": "Suspended", "status": "True"}]}}  # fmt: skip
    assert duration(suspended, now) == ""


def test_replica_counts_read_the_replica_specs_of_the_jobs_kind():
    from tf_operator.sdk.summary import replica_counts

    tfjob = {"kind": "TFJob", "spec": {"tfReplicaSpecs": {"PS": {"replicas": 1}, "Worker": {}}}}
    pytorchjob = {
        "kind": "PyTorchJob",
        "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 2}}},
    }
    assert replica_counts(tfjob) == "PS=1,Worker=1"
    assert replica_counts(pytorchjob) == "Master=1,Worker=2"
    assert replica_counts({**pytorchjob, "kind": "TFJob"}) == "<none>"  # not its field


def test_the_pod_names_a_follow_waits_for_are_the_kinds_replicas():
    from tf_operator.sdk import PYTORCHJOB, JobClient
    from tf_operator.sdk.kinds import replica_specs

    job = {
        "kind": "PyTorchJob",
        "metadata": {"name": "j"},
        "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 2}}},
    }
    assert list(replica_specs(job)) == ["Master", "Worker"]

    class NoKube:
        def resource(self, resource):
            return None

    client = JobClient(kube=NoKube(), kind=PYTORCHJOB)  # type: ignore[arg-type]
    assert client.expected_pod_names(job) == ["j-master-0", "j-worker-0", "j-worker-1"]
    assert client.expected_pod_names(job, "worker", 1) == ["j-worker-1"]


FINISHED = {
    "metadata": {"name": "done", "namespace": "ns", "resourceVersion": "7"},
    "spec": {"runPolicy": {"suspend": True}},
    "status": {"conditions": [{"type": "Succeeded", "status": "True"}]},
}


def test_a_finished_job_asked_to_suspend_is_not_being_suspended():
    """Succeeded and Failed are final: the operator does not act on the field, so describe
    must not say it is pending."""
    from tf_operator.sdk.summary import suspension

    assert suspension(FINISHED) == "true (finished: not acted on)"


class OneJob:
    """A cluster holding one job, which records the writes asked of it."""

    def __init__(self, job: dict) -> None:
        self.job = job
        self.writes: list[str] = []

    def resource(self, resource: object) -> "OneJob":
        return self

    def get(self, name: str, namespace: str | None = None) -> dict:
        return self.job

    def patch(self, *args: object, **kwargs: object) -> dict:
        self.writes.append("patch")
        return self.job


def test_the_sdk_refuses_to_suspend_or_resume_a_finished_job():
    from tf_operator.sdk import JobClient, JobFinished

    cluster = OneJob(FINISHED)
    client = JobClient(kube=cluster, namespace="ns")  # type: ignore[arg-type]
    for change in (client.suspend, client.resume):
        with pytest.raises(JobFinished, match="has Succeeded: a finished job cannot be"):
            change("done")
    assert cluster.writes == []
