"""Reading a TFJob's state from its conditions."""

import pytest

from tf_operator.sdk import conditions as cond


def job(*conds: tuple[str, str]) -> dict:
    return {"status": {"conditions": [{"type": t, "status": s} for t, s in conds]}}


@pytest.mark.parametrize(
    ("conditions", "state"),
    [
        ((), "Pending"),
        ((("Created", "True"),), "Created"),
        ((("Created", "True"), ("Running", "True")), "Running"),
        ((("Created", "True"), ("Running", "False"), ("Restarting", "True")), "Restarting"),
        ((("Created", "True"), ("Running", "False"), ("Succeeded", "True")), "Succeeded"),
        # a final condition wins even if something was appended after it
        ((("Failed", "True"), ("Running", "True")), "Failed"),
    ],
)
def test_job_state(conditions, state):
    assert cond.job_state(job(*conditions)) == state


def test_predicates_need_status_true():
    j = job(("Created", "True"), ("Running", "False"), ("Succeeded", "True"))
    assert cond.is_succeeded(j) and cond.is_finished(j)
    assert not cond.is_running(j) and not cond.is_failed(j) and not cond.is_restarting(j)
    assert cond.has_any_condition(j, ["Failed", "Succeeded"]) == "Succeeded"
    assert cond.has_any_condition({}, ["Succeeded"]) is None


def test_replica_statuses_fill_missing_counts():
    j = {"status": {"replicaStatuses": {"Worker": {"active": 2}, "PS": {}}}}
    assert cond.replica_statuses(j) == {
        "Worker": {"active": 2, "succeeded": 0, "failed": 0},
        "PS": {"active": 0, "succeeded": 0, "failed": 0},
    }
    assert cond.replica_statuses({"status": None}) == {}
