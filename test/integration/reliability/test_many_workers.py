"""Eight workers on two hundred jobs: every pod created once, no two live pods for one index,
and no lost update (every job ends Succeeded with its counts, and the operator's counters
saw each job once)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

NS = "default"
JOBS = 200


def test_eight_workers_on_two_hundred_jobs(env) -> None:
    op = env.operator("--threadiness=8")
    op.wait_log("Started workers")
    names = [f"many-{i}" for i in range(JOBS)]
    for name in names:
        env.create_job(name, workers=1, run_seconds=1.0)
    env.wait_succeeded(names, timeout=240)
    env.assert_one_pod_per_index(names, workers=1)
    for name in names:
        status = env.get_job(name)["status"]
        assert status["replicaStatuses"]["Worker"] == {"succeeded": 1}, (name, status)
        types = [c["type"] for c in status["conditions"] if c["status"] == "True"]
        assert types[0] == "Created" and types[-1] == "Succeeded", (name, status["conditions"])
        assert status["startTime"] and status["completionTime"]
    env.wait_for(
        lambda: op.metric("tf_operator_jobs_successful") == JOBS, 30, "the success counter"
    )
    assert op.metric("tf_operator_jobs_created") == JOBS
    assert op.metric("tf_operator_jobs_failed") == 0
    assert op.alive()
