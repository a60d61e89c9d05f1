"""Completion rules of ``lifecyclePolicy.success`` (divergences D100, D101): each rule decides
the job's success instead of its kind's, evaluators are waited for when asked, what still runs
(the PS) is stopped once the job succeeded whatever the cleanPodPolicy, and the policy in force
is the copy the first pass keeps in the status. Each rule is checked beside the same job
without a policy, which the kind's own rule decides as before."""

from __future__ import annotations

import pytest

from support.jobkinds import (
    JAXJOB_CASE,
    PADDLEJOB_CASE,
    PYTORCHJOB_CASE,
    TFJOB_CASE,
    XGBOOSTJOB_CASE,
    JobHarness,
    KindCase,
)
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V0_5_3

TF, PT = TFJOB_CASE, PYTORCHJOB_CASE


def _add(
    harness: JobHarness,
    case: KindCase,
    replicas: dict[str, int],
    policy: dict | None,
    **spec: object,
) -> dict:
    job = case.new_job_with(replicas, **spec)
    if policy is not None:
        job["spec"]["lifecyclePolicy"] = policy
    return harness.add_job(job)


def _succeeded(harness: JobHarness, job: dict) -> bool:
    return ("Succeeded", "True", f"{harness.case.kind_name}Succeeded") in harness.conditions(job)


def _finish_pass(harness: JobHarness, job: dict) -> list[str]:
    """The pass after the one that finished the job (its own write now cached): the pods it
    deletes."""
    harness.cache_job(harness.stored_job(job))
    harness.client.clear_actions()
    harness.sync(job)
    return sorted(harness.deleted("pods"))


@pytest.mark.parametrize("policy", [None, {"success": {"rule": "Chief"}}], ids=["none", "chief"])
def test_a_chief_rule_stops_the_ps_whatever_the_clean_pod_policy(policy):
    harness = JobHarness(TF)
    job = _add(harness, TF, {"Chief": 1, "PS": 2, "Worker": 2}, policy, cleanPodPolicy="None")
    harness.add_pods(job, "chief", succeeded=1)
    harness.add_pods(job, "ps", active=2)
    harness.add_pods(job, "worker", active=2)
    harness.sync(job)
    assert _succeeded(harness, job)  # the Chief decides either way
    deleted = _finish_pass(harness, job)
    if policy is None:
        assert deleted == []  # cleanPodPolicy None keeps the PS running: the old complaint
    else:
        assert deleted == [
            "test-tfjob-ps-0",
            "test-tfjob-ps-1",
            "test-tfjob-worker-0",
            "test-tfjob-worker-1",
        ]


@pytest.mark.parametrize("policy", [None, {"success": {"rule": "Worker0"}}], ids=["none", "w0"])
def test_the_worker0_rule_ends_the_job_while_the_chief_still_runs(policy):
    harness = JobHarness(TF)
    job = _add(harness, TF, {"Chief": 1, "PS": 1, "Worker": 2}, policy)
    harness.add_pods(job, "chief", active=1)
    harness.add_pods(job, "ps", active=1)
    harness.add_pods(job, "worker", succeeded=1)
    harness.add_pods(job, "worker", active=0)
    harness.sync(job)
    assert _succeeded(harness, job) is (policy is not None)


@pytest.mark.parametrize("policy", [None, {"success": {"rule": "AllWorkers"}}], ids=["none", "all"])
def test_the_all_workers_rule_waits_for_every_worker(policy):
    harness = JobHarness(TF)
    job = _add(harness, TF, {"PS": 1, "Worker": 2}, policy)
    harness.add_pods(job, "ps", active=1)
    harness.add_pod(TF.new_pod(job, "worker", 0, "Succeeded"))
    harness.add_pod(TF.new_pod(job, "worker", 1, "Running"))
    harness.sync(job)
    # v0.5.3's rule: worker 0 completed, so the job did; the rule waits for worker 1
    assert _succeeded(harness, job) is (policy is None)


@pytest.mark.parametrize(
    ("success", "succeeded", "expected"),
    [
        ({"minWorkers": 3}, 2, False),
        ({"minWorkers": 3}, 3, True),
        ({"minWorkersPercent": 50}, 2, False),  # half of 5, rounded up, is 3
        ({"minWorkersPercent": 50}, 3, True),
    ],
)
def test_the_min_workers_rule_counts_n_of_m(success, succeeded, expected):
    harness = JobHarness(TF)
    job = _add(harness, TF, {"PS": 1, "Worker": 5}, {"success": {"rule": "MinWorkers", **success}})
    harness.add_pods(job, "ps", active=1)
    for index in range(5):  # worker 0 runs, so v0.5.3's worker-0 rule cannot decide
        phase = "Succeeded" if 0 < index <= succeeded else "Running"
        harness.add_pod(TF.new_pod(job, "worker", index, phase))
    harness.sync(job)
    assert _succeeded(harness, job) is expected


@pytest.mark.parametrize("wait", [False, True])
def test_evaluators_are_waited_for_when_asked(wait):
    harness = JobHarness(TF)
    policy = {"success": {"rule": "Chief", "waitForEvaluators": wait}}
    job = _add(harness, TF, {"Chief": 1, "Evaluator": 1, "Worker": 1}, policy)
    harness.add_pods(job, "chief", succeeded=1)
    harness.add_pods(job, "worker", succeeded=1)
    evaluator = harness.add_pod(TF.new_pod(job, "evaluator", 0, "Running"))
    for rt in ("chief", "evaluator", "worker"):
        harness.add_services(job, rt, 1)  # a second pass is not held by their creates
    harness.sync(job)
    assert _succeeded(harness, job) is not wait
    if wait:
        evaluator["status"]["phase"] = "Succeeded"
        harness.pod_informer.get_indexer().update(evaluator)
        harness.cache_job(harness.stored_job(job))
        harness.sync(job)
        assert _succeeded(harness, job)
        assert _finish_pass(harness, job) == []  # nothing left running
    else:
        assert _finish_pass(harness, job) == ["test-tfjob-evaluator-0"]


@pytest.mark.parametrize("policy", [None, {"success": {"rule": "AllWorkers"}}], ids=["none", "all"])
def test_a_pytorchjob_with_the_all_workers_rule_ends_when_its_workers_do(policy):
    harness = JobHarness(PT)
    job = _add(harness, PT, {"Master": 1, "Worker": 2}, policy)
    harness.add_pods(job, "master", active=1)
    harness.add_pods(job, "worker", succeeded=2)
    harness.sync(job)
    assert _succeeded(harness, job) is (policy is not None)  # else the Master decides
    if policy is not None:
        assert _finish_pass(harness, job) == ["test-tfjob-master-0"]


def test_a_pytorchjob_master_rule_ends_when_the_master_does():
    harness = JobHarness(PT)
    job = _add(harness, PT, {"Master": 1, "Worker": 2}, {"success": {"rule": "Master"}})
    harness.add_pods(job, "master", succeeded=1)
    harness.add_pods(job, "worker", active=2)
    harness.sync(job)
    assert _succeeded(harness, job)


def test_a_failure_in_the_same_pass_is_not_turned_into_success():
    harness = JobHarness(TF)
    job = _add(harness, TF, {"Chief": 1, "PS": 1}, {"success": {"rule": "Chief"}})
    harness.add_pods(job, "chief", succeeded=1)
    harness.add_pods(job, "ps", failed=1)
    harness.sync(job)
    conditions = harness.conditions(job)
    assert ("Failed", "True", "TFJobFailed") in conditions
    assert not _succeeded(harness, job)


@pytest.mark.parametrize("case", [TF, PT], ids=str)
def test_the_first_pass_keeps_the_policy_in_force_in_the_status(case):
    harness = JobHarness(case)
    policy = {"success": {"rule": "AllWorkers"}}
    with_policy = _add(harness, case, {case.leader: 1, "Worker": 1}, policy)
    harness.sync(with_policy)
    assert harness.status(with_policy)["lifecyclePolicy"] == policy
    plain = _add(harness, case, {case.leader: 1, "Worker": 1}, None, name="plain")
    harness.sync(plain)
    assert "lifecyclePolicy" not in harness.status(plain)  # nothing new for a plain job


def test_the_policy_in_force_outlives_a_spec_that_lost_it():
    """A foreign client's full update dropped the spec's field; the status copy still rules."""
    harness = JobHarness(TF)
    job = _add(harness, TF, {"Chief": 1, "PS": 1, "Worker": 1}, {"success": {"rule": "Worker0"}})
    harness.add_pods(job, "chief", active=1)
    harness.add_pods(job, "ps", active=1)
    worker = harness.add_pod(TF.new_pod(job, "worker", 0, "Running"))
    for rt in ("chief", "ps", "worker"):
        harness.add_services(job, rt, 1)
    harness.sync(job)
    assert not _succeeded(harness, job)
    stored = harness.stored_job(job)
    del stored["spec"]["lifecyclePolicy"]
    harness.cache_job(stored)
    worker["status"]["phase"] = "Succeeded"
    harness.pod_informer.get_indexer().update(worker)
    harness.sync(job)
    assert _succeeded(harness, job)  # the Chief still runs: the kind's own rule would wait


@pytest.mark.parametrize(
    ("case", "replicas", "policy", "message"),
    [
        (TF, {"PS": 1, "Worker": 2}, {"rule": "MinWorkers", "minWorkers": 3}, "N of M"),
        (TF, {"PS": 1, "Worker": 2}, {"rule": "Chief"}, "needs a Chief or Master replica"),
        (TF, {"Chief": 1}, {"rule": "AllWorkers"}, "needs Worker replicas"),
        (TF, {"Worker": 2}, {"rule": "MinWorkers"}, "exactly one of minWorkers"),
        (PT, {"Master": 1, "Worker": 2}, {"rule": "Worker0"}, "unsupported value"),
        (PT, {"Master": 1, "Worker": 2}, {"rule": "MinWorkers", "minWorkers": 3}, "N of M"),
    ],
)
def test_the_operator_refuses_what_the_crd_refuses(case, replicas, policy, message):
    job = case.new_job_with(replicas)
    job["spec"]["lifecyclePolicy"] = {"success": policy}
    job["metadata"]["uid"] = "u"
    with pytest.raises(case.invalid_error, match=message):
        case.kind.decode(job, DEFAULTS_V0_5_3)


@pytest.mark.parametrize(
    ("case", "policy"),
    [
        (XGBOOSTJOB_CASE, None),
        (XGBOOSTJOB_CASE, {"success": {"rule": "MinWorkers", "minWorkers": 2}}),
        (PADDLEJOB_CASE, None),
        (PADDLEJOB_CASE, {"success": {"rule": "MinWorkers", "minWorkersPercent": 50}}),
        (PYTORCHJOB_CASE, None),
        (PYTORCHJOB_CASE, {"success": {"rule": "MinWorkers", "minWorkers": 2}}),
    ],
    ids=["xgboost-none", "xgboost-min", "paddle-none", "paddle-min", "pytorch-none", "pytorch-min"],
)
def test_n_of_m_ends_a_master_worker_job_while_its_master_runs(case, policy):
    harness = JobHarness(case)
    job = _add(harness, case, {"Master": 1, "Worker": 4}, policy)
    harness.add_pods(job, "master", active=1)
    harness.add_pods(job, "worker", active=2, succeeded=2)
    harness.sync(job)
    assert _succeeded(harness, job) is (policy is not None)  # else the Master decides
    if policy is not None:
        stopped = ["test-tfjob-master-0", "test-tfjob-worker-0", "test-tfjob-worker-1"]
        assert _finish_pass(harness, job) == stopped


@pytest.mark.parametrize("policy", [None, {"success": {"rule": "Worker0"}}], ids=["none", "w0"])
def test_worker0_ends_a_jaxjob_while_its_other_workers_run(policy):
    harness = JobHarness(JAXJOB_CASE)
    job = _add(harness, JAXJOB_CASE, {"Worker": 3}, policy)
    done = JAXJOB_CASE.new_pod(job, "worker", 0, "Succeeded")
    # v1.9's worker-0 rule wants the default container's exit code 0 too (D58)
    terminated = {"terminated": {"exitCode": 0, "reason": "Completed"}}
    done["status"]["containerStatuses"] = [{"name": "jax", "state": terminated}]
    harness.add_pod(done)
    for index in (1, 2):
        harness.add_pod(JAXJOB_CASE.new_pod(job, "worker", index, "Running"))
    harness.add_services(job, "worker", 3)
    harness.sync(job)
    assert _succeeded(harness, job) is (policy is not None)  # else every worker must succeed
    if policy is not None:
        assert _finish_pass(harness, job) == ["test-tfjob-worker-1", "test-tfjob-worker-2"]
