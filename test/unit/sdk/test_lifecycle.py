"""The SDK's lifecycle-policy builders and readers (docs/policies.md), and what ``tfjob
describe`` shows of them."""

from datetime import UTC, datetime

import pytest

from tf_operator.cli.describe import describe
from tf_operator.sdk import tfjob
from tf_operator.sdk.lifecycle import (
    blocking_reason,
    failure_policy,
    failure_rule,
    policy_in_force,
    restart_budget,
    restarts_by_cause,
    restarts_by_replica_type,
    startup_policy,
    success_policy,
    with_lifecycle_policy,
)


def _job(**policy):
    return with_lifecycle_policy(
        tfjob("train", "tf:1", ps=1, workers=4, chief=True, backoff_limit=3), **policy
    )


def test_the_builders_write_the_policy_the_crd_takes():
    job = _job(
        success=success_policy("Chief", wait_for_evaluators=True),
        failure=failure_policy(
            failure_rule("FailJob", exit_codes_in=[42]),
            failure_rule("RestartJob", replica_types=["Worker"], exit_codes_not_in=[0]),
            replica_type_limits={"Worker": 5},
        ),
        startup=startup_policy(deadline_seconds=600, ordered=True),
    )
    assert job["spec"]["lifecyclePolicy"] == {
        "success": {"rule": "Chief", "waitForEvaluators": True},
        "failure": {
            "rules": [
                {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
                {
                    "action": "RestartJob",
                    "onExitCodes": {"operator": "NotIn", "values": [0]},
                    "onReplicaTypes": ["Worker"],
                },
            ],
            "replicaTypeLimits": {"Worker": 5},
        },
        "startup": {"deadlineSeconds": 600, "action": "FailJob", "ordered": True},
    }


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({"success": success_policy("MinWorkers", min_workers=5)}, "N of M"),
        ({"failure": failure_policy({"action": "FailJob"})}, "at least one of onExitCodes"),
        ({"startup": startup_policy(action="Ignore")}, "unsupported value"),
    ],
)
def test_a_contradiction_is_refused_where_the_job_is_built(policy, message):
    with pytest.raises(ValueError, match=message):
        _job(**policy)


def test_the_readers_show_the_policy_the_budget_the_causes_and_the_block():
    job = _job(success=success_policy("AllWorkers"))
    in_force = {"success": {"rule": "Chief"}}
    job["spec"].pop("lifecyclePolicy")  # a foreign full update dropped it
    job["status"] = {
        "lifecyclePolicy": in_force,
        "exitCodeRestarts": {"count": 2},
        "restartsByCause": {"Disruption": 3, "JobRestart": 1, "FailureRule": 1},
        "conditions": [
            {
                "type": "Created",
                "status": "True",
                "reason": "TFJobCreated",
                "message": "TFJob train is created. Blocked: pod train-worker-1: ImagePullBackOff",
            }
        ],
    }
    assert policy_in_force(job) == in_force
    assert restart_budget(job) == (2, 3)
    assert restarts_by_cause(job) == {"Disruption": 3, "JobRestart": 1, "FailureRule": 1}
    job["status"]["restartsByReplicaType"] = {"Worker": 1}
    assert restarts_by_replica_type(job) == {"Worker": 1}
    assert blocking_reason(job) == "pod train-worker-1: ImagePullBackOff"
    job["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    text = describe(job, [], [], now=datetime(2026, 1, 1, 1, tzinfo=UTC))
    assert 'Lifecycle policy:  {"success":{"rule":"Chief"}}' in text
    assert "Restart budget:    2 of 3 used" in text
    assert "Restarts by cause: Disruption=3, FailureRule=1, JobRestart=1" in text
    assert "Blocked:           pod train-worker-1: ImagePullBackOff" in text


def test_a_job_without_a_policy_reads_as_before():
    job = tfjob("plain", "tf:1")
    assert policy_in_force(job) is None
    assert restarts_by_cause(job) == {}
    assert blocking_reason(job) is None
    job["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    assert "Lifecycle policy" not in describe(job, [], [])


def _v1_9_kind_job(kind: str, field: str, container: str, **types: int) -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": kind,
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {
            field: {
                t: {
                    "replicas": n,
                    "template": {"spec": {"containers": [{"name": container, "image": "i:1"}]}},
                }
                for t, n in types.items()
            }
        },
    }


XGBOOST_JOB = _v1_9_kind_job("XGBoostJob", "xgbReplicaSpecs", "xgboost", Master=1, Worker=2)
JAX_JOB = _v1_9_kind_job("JAXJob", "jaxReplicaSpecs", "jax", Worker=2)
PADDLE_JOB = _v1_9_kind_job("PaddleJob", "paddleReplicaSpecs", "paddle", Master=1, Worker=2)


@pytest.mark.parametrize(
    ("job", "good", "bad", "message"),
    [
        (XGBOOST_JOB, "Master", "Worker0", "unsupported value 'Worker0'"),
        (JAX_JOB, "Worker0", "Master", "unsupported value 'Master'"),
        (PADDLE_JOB, "Master", "Chief", "unsupported value 'Chief'"),
    ],
    ids=lambda v: v["kind"] if isinstance(v, dict) else None,
)
def test_every_kind_is_checked_by_its_own_rules(job, good, bad, message):
    built = with_lifecycle_policy(job, success=success_policy(good))
    assert built["spec"]["lifecyclePolicy"] == {"success": {"rule": good}}
    assert built["kind"] == job["kind"]
    with pytest.raises(ValueError, match=message):
        with_lifecycle_policy(job, success=success_policy(bad))
    with pytest.raises(ValueError, match="N of M"):
        with_lifecycle_policy(job, success=success_policy("MinWorkers", min_workers=3))


def test_jaxjob_describe_shows_the_policy_in_force():
    from tf_operator.sdk.kinds import JAXJOB

    job = with_lifecycle_policy(
        JAX_JOB, failure=failure_policy(failure_rule("FailJob", exit_codes_in=[3]))
    )
    job["spec"]["runPolicy"] = {"backoffLimit": 2}
    job["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    job["status"] = {"restartsByCause": {"Disruption": 1}}
    text = describe(job, [], [], now=datetime(2026, 1, 1, 1, tzinfo=UTC), kind=JAXJOB)
    assert "Lifecycle policy:" in text and '"onExitCodes":{"operator":"In","values":[3]}' in text
    assert "Restart budget:    0 of 2 used" in text
    assert "Restarts by cause: Disruption=1" in text
