"""The restart budget of a job with a failure policy survives an operator restart (D103): the
count lives in the job's status, so the new leader goes on from it, and the job fails at its
backoffLimit, not later; a pod evicted through the eviction API (what a node drain does) is
recreated without spending it."""

import pytest

pytestmark = pytest.mark.integration

RUN = "localcluster.tf-operator.io/run-seconds"
EXIT = "localcluster.tf-operator.io/exit-code"
PODS = ("", "v1", "pods")


def counted(sim, name):
    return ((sim.get(name).get("status") or {}).get("exitCodeRestarts") or {}).get("count", 0)


def test_the_budget_survives_an_operator_restart(sim, operators):
    first = operators(sim)
    sim.wait_for(first.is_leader, 30, "leadership")
    name = "lc-budget"
    rule = {"action": "RestartReplica", "onExitCodes": {"operator": "NotIn", "values": [0]}}
    job = sim.job(
        name,
        {"PS": {}, "Worker": {"restartPolicy": "Never", "annotations": {RUN: "1.5", EXIT: "3"}}},
        backoffLimit=3,
        lifecyclePolicy={"failure": {"rules": [rule]}},
    )
    sim.create(job)
    sim.wait_for(lambda: counted(sim, name) >= 1, 30, "a first counted restart")
    first.stop()
    before = counted(sim, name)
    second = operators(sim)
    sim.wait_for(second.is_leader, 40, "the new leader")
    seen = [before]

    def failed():
        seen.append(counted(sim, name))
        return sim.condition(name, "Failed")

    condition = sim.wait_for(failed, 60, "the job failed at its backoffLimit")
    assert condition["reason"] == "BackoffLimitExceeded"
    assert seen == sorted(seen)  # never counted from zero again
    status = sim.get(name)["status"]
    assert status["exitCodeRestarts"]["count"] == 3
    assert status["restartsByCause"] == {"FailureRule": 3}


def test_a_pod_evicted_through_the_eviction_api_is_recreated_without_spending_the_budget(
    sim, operators
):
    op = operators(sim)
    sim.wait_for(op.is_leader, 40, "leadership")
    name = "lc-drain"
    job = sim.job(
        name,
        {"PS": {}, "Worker": {"replicas": 2, "annotations": {RUN: "4"}}},
        backoffLimit=0,
        lifecyclePolicy={"failure": {}},
    )
    sim.create(job)
    target = f"{name}-worker-1"

    def running():
        pods = {p["metadata"]["name"]: p for p in sim.pods(name)}
        pod = pods.get(target)
        return pod if pod and pod["status"].get("phase") == "Running" else None

    pod = sim.wait_for(running, 30, "worker-1 runs")
    uid = pod["metadata"]["uid"]
    # what the eviction API does: the DisruptionTarget condition, then the deletion
    pod["status"]["conditions"] = [
        *(pod["status"].get("conditions") or []),
        {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"},
    ]
    sim.client.update(PODS, "default", target, pod, subresource="status")
    sim.client.delete(PODS, "default", target)

    def recreated():
        pods = {p["metadata"]["name"]: p["metadata"]["uid"] for p in sim.pods(name)}
        return pods.get(target) not in (None, uid)

    sim.wait_for(recreated, 30, "worker-1 recreated")
    sim.wait_condition(name, "Succeeded", 60)
    assert counted(sim, name) == 0
