"""The failure policy of ``lifecyclePolicy.failure`` (divergences D102, D103): disruptions are
recreated without spending the budget, rules match exit codes, replica types and disruptions
to RestartReplica, RestartJob, FailJob or Ignore, every decision is written to the status
before its pod is deleted, once, and the count survives a new leader. Each behaviour is checked
beside the same job without a policy where the old rule differs."""

from __future__ import annotations

import pytest

from support.jobkinds import KINDS, TFJOB_CASE, JobHarness, KindCase
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V0_5_3
from tf_operator.common.jobcontroller.failure_policy import is_disruption
from tf_operator.common.jobcontroller.transform import strip_pod
from tf_operator.k8s.client import PODS

TF = TFJOB_CASE


def _job(
    harness: JobHarness,
    case: KindCase,
    replicas: dict[str, int],
    failure: dict | None,
    restart_policy: str = "Never",
    **spec: object,
) -> dict:
    job = case.new_job_with(replicas, **spec)
    for rspec in job["spec"][case.specs_field].values():
        rspec["restartPolicy"] = restart_policy
    if failure is not None:
        job["spec"]["lifecyclePolicy"] = {"failure": failure}
    return harness.add_job(job)


def _ended(case: KindCase, job: dict, rt: str, index: int, code: int | None, **status) -> dict:
    pod = case.new_pod(job, rt, index, "Failed")
    if code is not None:
        pod["status"]["containerStatuses"] = [
            {"name": case.container, "state": {"terminated": {"exitCode": code}}}
        ]
    pod["status"].update(status)
    return pod


def _complete(harness: JobHarness, job: dict, types: dict[str, int]) -> None:
    """Running pods and services for every other index, so a pass creates nothing."""
    for rt, count in types.items():
        harness.add_services(job, rt, count)


def _status(harness: JobHarness, job: dict) -> dict:
    return harness.status(job)


DISRUPTIONS = {
    "evicted": {"reason": "Evicted"},
    "node-shutdown": {"reason": "Terminated"},
    "preempted": {
        "conditions": [
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
        ]
    },
    "node-lost": {
        "conditions": [
            {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}
        ]
    },
    "drained": {
        "conditions": [
            {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}
        ]
    },
}


@pytest.mark.parametrize("case", KINDS, ids=str)
@pytest.mark.parametrize("how", list(DISRUPTIONS))
@pytest.mark.parametrize("failure", [None, {}], ids=["none", "policy"])
def test_a_disrupted_replica_is_recreated_without_spending_the_budget(case, how, failure):
    harness = JobHarness(case)
    job = _job(harness, case, {case.leader: 1, "Worker": 2}, failure, backoffLimit=1)
    harness.add_pods(job, case.leader.lower(), active=1)
    harness.add_pods(job, "worker", active=1)
    harness.add_pod(_ended(case, job, "worker", 1, 137, **DISRUPTIONS[how]))
    _complete(harness, job, {case.leader.lower(): 1, "worker": 2})
    harness.sync(job)
    conditions = harness.conditions(job)
    failed = any(c[0] == "Failed" and c[1] == "True" for c in conditions)
    if failure is None:
        assert failed  # the old rule: a failed replica fails the job
        return
    assert not failed
    assert harness.deleted("pods") == ["test-tfjob-worker-1"]
    status = _status(harness, job)
    assert status["exitCodeRestarts"]["count"] == 0  # the budget is untouched
    assert status["restartsByCause"] == {"Disruption": 1}


def test_a_pod_deleted_by_someone_else_is_a_disruption():
    harness = JobHarness(TF)
    job = _job(harness, TF, {"Worker": 1}, {})
    stored = harness.add_pod(_ended(TF, job, "worker", 0, 143), cache=False)
    stored["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # as the cache sees it
    harness.pod_informer.get_indexer().add(stored)
    _complete(harness, job, {"worker": 1})
    harness.sync(job)
    assert _status(harness, job)["restartsByCause"] == {"Disruption": 1}
    assert harness.deleted("pods") == []  # it is on its way out already
    assert not any(c[0] == "Failed" for c in harness.conditions(job))


def test_disruption_fields_survive_the_cache_transform():
    for status in DISRUPTIONS.values():
        pod = {"metadata": {"name": "p"}, "status": {"phase": "Failed", **status}}
        assert is_disruption(strip_pod(pod))
    assert not is_disruption(strip_pod({"metadata": {}, "status": {"phase": "Failed"}}))


def test_count_disruptions_spends_the_budget():
    harness = JobHarness(TF)
    job = _job(harness, TF, {"Worker": 2}, {"countDisruptions": True})
    harness.add_pods(job, "worker", active=1)
    harness.add_pod(_ended(TF, job, "worker", 1, 137, reason="Evicted"))
    _complete(harness, job, {"worker": 2})
    harness.sync(job)
    status = _status(harness, job)
    assert status["exitCodeRestarts"]["count"] == 1
    assert status["restartsByCause"] == {"Disruption": 1}


@pytest.mark.parametrize(
    "failure",
    [None, {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [137]}}]}],
    ids=["none", "rule"],
)
def test_an_exit_code_rule_fails_the_job_at_once(failure):
    harness = JobHarness(TF)
    # 137 is retryable under ExitCode: without the rule the worker is recreated
    job = _job(harness, TF, {"PS": 1, "Worker": 2}, failure, restart_policy="ExitCode")
    harness.add_pods(job, "ps", active=1)
    harness.add_pods(job, "worker", active=1)
    harness.add_pod(_ended(TF, job, "worker", 1, 137))
    _complete(harness, job, {"ps": 1, "worker": 2})
    harness.sync(job)
    conditions = harness.conditions(job)
    if failure is None:
        assert ("Restarting", "True", "TFJobRestarting") in conditions
        return
    assert ("Failed", "True", "PodFailurePolicy") in conditions
    failed = next(c for c in _status(harness, job)["conditions"] if c["type"] == "Failed")
    assert (
        "test-tfjob-worker-1 of replica type Worker ended with exit code 137" in (failed["message"])
    )
    assert "rules[0] says FailJob" in failed["message"]


def test_rules_match_in_order_by_replica_type_and_exit_code():
    rules = [
        {"action": "Ignore", "onReplicaTypes": ["PS"]},
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
        {"action": "RestartReplica", "onExitCodes": {"operator": "NotIn", "values": [0]}},
    ]
    harness = JobHarness(TF)
    job = _job(harness, TF, {"PS": 1, "Worker": 2}, {"rules": rules})
    harness.add_pod(_ended(TF, job, "ps", 0, 42))  # the PS rule comes first: ignored
    harness.add_pods(job, "worker", active=1)
    harness.add_pod(_ended(TF, job, "worker", 1, 3))  # restarted, counted
    _complete(harness, job, {"ps": 1, "worker": 2})
    harness.sync(job)
    status = _status(harness, job)
    assert status["restartsByCause"] == {"Ignored": 1, "FailureRule": 1}
    assert status["exitCodeRestarts"]["count"] == 1
    assert sorted(harness.deleted("pods")) == ["test-tfjob-ps-0", "test-tfjob-worker-1"]
    assert not any(c[0] == "Failed" for c in harness.conditions(job))


def _resync(harness: JobHarness, job: dict) -> None:
    """Bring the cache up to the API's state (the informer's events), then run a pass."""
    harness.cache_job(harness.stored_job(job))
    indexer = harness.pod_informer.get_indexer()
    live = {p["metadata"]["name"]: p for p in harness.client.resource(PODS).list()["items"]}
    for pod in list(indexer.list()):
        if pod["metadata"]["name"] not in live:
            indexer.delete(pod)
    harness.ctr.expectations.delete_expectations_with_prefix("default/")
    harness.client.clear_actions()
    harness.sync(job)


def test_a_whole_job_restart_recreates_every_replica_and_counts_once():
    rules = [{"action": "RestartJob", "onExitCodes": {"operator": "NotIn", "values": [0]}}]
    harness = JobHarness(TF)
    job = _job(harness, TF, {"PS": 1, "Worker": 4}, {"rules": rules}, backoffLimit=3)
    harness.add_pods(job, "ps", active=1)
    for index in (0, 1, 3):
        harness.add_pod(TF.new_pod(job, "worker", index, "Running"))
    harness.add_pod(_ended(TF, job, "worker", 2, 1))
    _complete(harness, job, {"ps": 1, "worker": 4})
    harness.sync(job)
    assert sorted(harness.deleted("pods")) == [
        "test-tfjob-ps-0",
        *(f"test-tfjob-worker-{i}" for i in range(4)),
    ]
    status = _status(harness, job)
    assert status["exitCodeRestarts"]["count"] == 1
    assert status["restartsByCause"] == {"JobRestart": 1}
    # the next pass recreates all five and counts nothing more
    _resync(harness, job)
    assert len(harness.created("pods")) == 5
    assert _status(harness, job)["exitCodeRestarts"]["count"] == 1


def test_the_budget_survives_a_new_leader_and_is_not_counted_twice():
    rules = [{"action": "RestartReplica", "onReplicaTypes": ["Worker"]}]
    harness = JobHarness(TF)
    job = _job(harness, TF, {"Worker": 2}, {"rules": rules}, backoffLimit=2)
    harness.add_pods(job, "worker", active=1)
    harness.add_pod(_ended(TF, job, "worker", 1, 1))
    _complete(harness, job, {"worker": 2})
    # the pass writes its decision, then "crashes" before deleting the pod
    harness.client.prepend_reactor("delete", "pods", lambda a: (True, RuntimeError("crash")))
    with pytest.raises(RuntimeError):
        harness.sync(job)
    assert _status(harness, job)["exitCodeRestarts"]["count"] == 1
    successor = JobHarness(TF, client=harness.client)
    harness.client._reactors.clear()
    successor.cache_job(harness.stored_job(job))
    for pod in harness.client.resource(PODS).list()["items"]:
        successor.pod_informer.get_indexer().add(strip_pod(pod))
    for svc in harness.service_informer.get_indexer().list():
        successor.service_informer.get_indexer().add(svc)
    successor.client.clear_actions()
    successor.sync(job)
    assert successor.deleted("pods") == ["test-tfjob-worker-1"]  # the delete it owed
    assert _status(successor, job)["exitCodeRestarts"]["count"] == 1  # not counted again


def test_a_plain_job_gets_no_new_status_field():
    harness = JobHarness(TF)
    job = _job(harness, TF, {"Worker": 2}, None, restart_policy="ExitCode")
    harness.add_pods(job, "worker", active=1)
    harness.add_pod(_ended(TF, job, "worker", 1, 137))
    _complete(harness, job, {"worker": 2})
    harness.sync(job)
    assert "restartsByCause" not in _status(harness, job)
    assert _status(harness, job)["exitCodeRestarts"]["count"] == 1


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"action": "FailJob"}, "at least one of onExitCodes, onReplicaTypes and onDisruption"),
        ({"action": "Retry", "onDisruption": True}, "unsupported value"),
        ({"action": "Ignore", "onReplicaTypes": ["Chief"]}, "which the job does not have"),
        ({"action": "FailJob", "onExitCodes": {"operator": "In", "values": []}}, "1 to 255"),
    ],
)
def test_the_operator_refuses_what_the_crd_refuses(rule, message):
    job = TF.new_job_with({"Worker": 1})
    job["spec"]["lifecyclePolicy"] = {"failure": {"rules": [rule]}}
    with pytest.raises(TF.invalid_error, match=message):
        TF.kind.decode(job, DEFAULTS_V0_5_3)


def test_a_replica_type_limit_fails_the_job_at_the_restart_past_it():
    harness = JobHarness(TF)
    failure = {"replicaTypeLimits": {"Worker": 1}}
    job = _job(harness, TF, {"PS": 1, "Worker": 2}, failure, restart_policy="ExitCode")
    harness.add_pods(job, "ps", active=1)
    harness.add_pods(job, "worker", active=1)
    harness.add_pod(_ended(TF, job, "worker", 1, 137))
    _complete(harness, job, {"ps": 1, "worker": 2})
    harness.sync(job)  # the first ExitCode recreation of a worker: within the limit
    status = _status(harness, job)
    assert status["restartsByReplicaType"] == {"Worker": 1}
    assert status["restartsByCause"] == {"ExitCode": 1}
    assert harness.deleted("pods") == ["test-tfjob-worker-1"]
    # its replacement fails the same way: one past the limit
    _resync(harness, job)  # recreates worker 1
    pods = harness.client.resource(PODS)
    again = pods.get("test-tfjob-worker-1", namespace="default")
    again["status"] = _ended(TF, job, "worker", 1, 137)["status"]
    again = pods.update_status(again, namespace="default")
    harness.pod_informer.get_indexer().add(strip_pod(again))
    harness.ctr.expectations.delete_expectations_with_prefix("default/")
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    failed = next(c for c in _status(harness, job)["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "PodFailurePolicy"
    assert "its Worker replicas were restarted 1 times, their limit" in failed["message"]
