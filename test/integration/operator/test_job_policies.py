"""Run-policy behaviour on the simulated kubelet: clean pod policy, backoff, deadline, TTL,
invalid specs next to valid ones."""

import pytest

pytestmark = pytest.mark.integration

RUN = "localcluster.tf-operator.io/run-seconds"
EXIT = "localcluster.tf-operator.io/exit-code"


@pytest.fixture(scope="module")
def op(sim, module_operator):
    operator = module_operator(sim, "--threadiness=4")
    sim.wait_for(operator.is_leader, 30, "leadership")
    return operator


def finishing(seconds="0.5", code="0"):
    return {RUN: seconds, EXIT: code}


@pytest.mark.parametrize(
    ("policy", "left"),
    [("All", set()), ("Running", {"worker-0"}), ("None", {"worker-0", "ps-0"})],
)
def test_clean_pod_policy(sim, op, policy, left):
    name = f"clean-{policy.lower()}"
    job = sim.job(
        name,
        {"PS": {}, "Worker": {"annotations": finishing()}},  # PS runs until deleted
        cleanPodPolicy=policy,
    )
    sim.create(job)
    sim.wait_condition(name, "Succeeded", 30)

    def remaining():
        pods = [p for p in sim.pods(name) if not p["metadata"].get("deletionTimestamp")]
        names = {p["metadata"]["name"].removeprefix(f"{name}-") for p in pods}
        return names if names == left else None

    assert sim.wait_for(lambda: remaining() is not None, 20, f"pods left {left}") is not None


def test_backoff_limit(sim, op):
    job = sim.job(
        "backoff",
        {"Worker": {"restartPolicy": "OnFailure", "annotations": finishing("0.2", "1")}},
        backoffLimit=1,
    )
    sim.create(job)
    cond = sim.wait_condition("backoff", "Failed", 40)
    assert "backoff limit" in cond["message"]
    assert cond["reason"] == "BackoffLimitExceeded"  # divergence D36


def test_active_deadline(sim, op):
    job = sim.job("deadline", {"Worker": {"replicas": 2}}, activeDeadlineSeconds=2)
    sim.create(job)
    cond = sim.wait_condition("deadline", "Failed", 30)
    assert "deadline" in cond["message"]
    assert cond["reason"] == "DeadlineExceeded"  # divergence D36
    sim.wait_for(
        lambda: all(p["metadata"].get("deletionTimestamp") for p in sim.pods("deadline")),
        20,
        "active pods killed",
    )


def test_ttl_deletes_finished_job(sim, op):
    job = sim.job("ttl", {"Worker": {"annotations": finishing("0.2")}}, ttlSecondsAfterFinished=1)
    sim.create(job)
    sim.wait_condition("ttl", "Succeeded", 30)
    sim.wait_for(lambda: not sim.exists("ttl"), 30, "TTL deletion")


def _nest(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth - 1):
        value = {"x": value}
    return value


def test_invalid_job_beside_valid_one(sim, op):
    # an error the CRD leaves to the operator (its schema keeps containers as written, beside
    # their names, images and ports): a container nested deeper than the operator runs (D70)
    bad = sim.job("invalid", {"Worker": {"container": {"extra": _nest(120)}}})
    good = sim.job("valid", {"Worker": {"annotations": finishing("0.2")}})
    sim.create(bad)
    sim.create(good)
    cond = sim.wait_condition("invalid", "Failed", 30)
    assert cond["reason"] == "InvalidTFJobSpec"
    sim.wait_condition("valid", "Succeeded", 30)
    assert sim.pods("invalid") == []
    sim.wait_for(  # events are written asynchronously, after the status
        lambda: any(e["reason"] == "InvalidTFJobSpec" for e in sim.events("invalid")),
        30,
        "the InvalidTFJobSpec event",
    )
    sim.wait_for(lambda: op.metric("tf_operator_jobs_successful") >= 1, 30, "success counted")
