"""Lifecycle policies on the simulated kubelet (docs/policies.md): completion rules end the job
when training ends and stop the PS, evaluators are waited for, and the policy stays in force
through a full update by a client that does not know it (D100, D101)."""

import pytest

from support.edits import edit as retry_on_conflict

pytestmark = pytest.mark.integration

RUN = "localcluster.tf-operator.io/run-seconds"
EXIT = "localcluster.tf-operator.io/exit-code"
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
# the spec fields training-operator v1.9's Go TFJob type has
V19_SPEC_FIELDS = ("runPolicy", "successPolicy", "tfReplicaSpecs", "enableDynamicWorker")


@pytest.fixture(scope="module")
def op(sim, module_operator):
    operator = module_operator(sim, "--threadiness=2")
    sim.wait_for(operator.is_leader, 30, "leadership")
    return operator


def finishing(seconds="0.5", code="0"):
    return {RUN: seconds, EXIT: code}


def live_pods(sim, name):
    pods = [p for p in sim.pods(name) if not p["metadata"].get("deletionTimestamp")]
    return {p["metadata"]["name"].removeprefix(f"{name}-"): p["status"]["phase"] for p in pods}


def v19_full_update(sim, name, edit):
    """Get, decode into v1.9's spec fields only, edit, put back (a Go client on v1.9's types)."""

    def change(live: dict) -> None:
        live["spec"] = {k: v for k, v in live["spec"].items() if k in V19_SPEC_FIELDS}
        edit(live)

    return retry_on_conflict(sim.client, TFJOBS, "default", name, change)


def test_the_chief_rule_stops_the_ps_and_outlives_a_foreign_full_update(sim, op):
    name = "lc-chief"
    job = sim.job(
        name,
        {"Chief": {"annotations": finishing("3")}, "PS": {}, "Worker": {"replicas": 2}},
        cleanPodPolicy="None",  # without the rule, the PS and workers would run on
        lifecyclePolicy={"success": {"rule": "Chief"}},
    )
    sim.create(job)
    sim.wait_for(lambda: (sim.get(name).get("status") or {}).get("lifecyclePolicy"), 20, "copy")

    def label(job):
        job["metadata"].setdefault("labels", {})["touched"] = "yes"

    updated = v19_full_update(sim, name, label)
    assert "lifecyclePolicy" not in updated["spec"]
    sim.wait_condition(name, "Succeeded", 40)
    # the PS and the workers were stopped; the chief's finished pod stays (cleanPodPolicy None)
    sim.wait_for(lambda: live_pods(sim, name) == {"chief-0": "Succeeded"}, 30, "PS stopped")
    assert sim.get(name)["status"]["lifecyclePolicy"] == {"success": {"rule": "Chief"}}


def test_all_workers_end_the_job_while_the_chief_runs(sim, op):
    name = "lc-workers"
    job = sim.job(
        name,
        {"Chief": {}, "Worker": {"replicas": 2, "annotations": finishing("0.3")}},
        lifecyclePolicy={"success": {"rule": "AllWorkers"}},
    )
    sim.create(job)
    sim.wait_condition(name, "Succeeded", 40)
    sim.wait_for(lambda: "chief-0" not in live_pods(sim, name), 30, "the chief stopped")


def test_evaluators_are_waited_for(sim, op):
    name = "lc-eval"
    job = sim.job(
        name,
        {
            "Chief": {"annotations": finishing("0.2")},
            "Worker": {"annotations": finishing("0.2")},
            "Evaluator": {"annotations": finishing("2")},
        },
        cleanPodPolicy="None",
        lifecyclePolicy={"success": {"rule": "Chief", "waitForEvaluators": True}},
    )
    sim.create(job)
    sim.wait_condition(name, "Succeeded", 40)
    # the evaluator ran to its end: it was not killed when the chief finished
    assert live_pods(sim, name)["evaluator-0"] == "Succeeded"


PODS = ("", "v1", "pods")


def evict(sim, pod_name):
    """What a kubelet's node-pressure eviction leaves: the pod Failed, reason Evicted, with a
    DisruptionTarget condition (the local kubelets do not evict by themselves)."""
    pod = sim.client.get(PODS, "default", pod_name)
    pod["status"]["phase"] = "Failed"
    pod["status"]["reason"] = "Evicted"
    pod["status"]["conditions"] = [
        *(pod["status"].get("conditions") or []),
        {"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet"},
    ]
    sim.client.update(PODS, "default", pod_name, pod, subresource="status")


def test_an_evicted_worker_is_recreated_without_spending_the_budget(sim, op):
    name = "lc-evict"
    job = sim.job(
        name,
        {"PS": {}, "Worker": {"replicas": 2, "annotations": finishing("4")}},
        backoffLimit=0,  # any counted restart would fail the job
        lifecyclePolicy={"failure": {}},
    )
    sim.create(job)
    sim.wait_for(lambda: live_pods(sim, name).get("worker-1") == "Running", 30, "worker-1 runs")
    first = {p["metadata"]["name"]: p["metadata"]["uid"] for p in sim.pods(name)}
    evict(sim, f"{name}-worker-1")

    def recreated():
        pods = {p["metadata"]["name"]: p["metadata"]["uid"] for p in sim.pods(name)}
        return pods.get(f"{name}-worker-1") not in (None, first[f"{name}-worker-1"])

    sim.wait_for(recreated, 30, "worker-1 recreated")
    sim.wait_condition(name, "Succeeded", 60)
    status = sim.get(name)["status"]
    assert status["restartsByCause"] == {"Disruption": 1}
    assert status["exitCodeRestarts"]["count"] == 0
    events = [e["reason"] for e in sim.events(name)]
    assert "TFJobRestarting" in events


def test_an_unschedulable_replica_is_told_then_fails_the_job_at_the_start_up_deadline(sim, op):
    name = "lc-startup"
    huge = {"resources": {"requests": {"cpu": "100000"}}}  # no node has it
    job = sim.job(
        name,
        {"PS": {}, "Worker": {"replicas": 2, "container": huge}},
        lifecyclePolicy={"startup": {"deadlineSeconds": 4}},
    )
    sim.create(job)

    def told():
        created = sim.condition(name, "Created")
        return (
            created is not None
            and "Blocked: pod lc-startup-worker-0: Unschedulable" in (created["message"])
        )

    sim.wait_for(told, 20, "the blocking reason on the Created condition")
    # the recorder's thread sends the event after the status write it follows
    sim.wait_for(
        lambda: any(e["reason"] == "ReplicaBlocked" for e in sim.events(name)), 20, "the event"
    )
    failed = sim.wait_condition(name, "Failed", 30)
    assert failed["reason"] == "StartupDeadlineExceeded"
    assert "did not start within 4s: pod lc-startup-worker-0: Unschedulable" in failed["message"]
    sim.wait_for(lambda: live_pods(sim, name) == {}, 20, "every pod stopped")


def test_an_ordered_start_creates_no_worker_before_the_ps_runs(sim, op):
    name = "lc-ordered"
    huge = {"resources": {"requests": {"cpu": "100000"}}}  # the PS cannot be placed
    job = sim.job(
        name,
        {"PS": {"container": huge}, "Worker": {"replicas": 2}},
        lifecyclePolicy={"startup": {"ordered": True}},
    )
    sim.create(job)

    def told():
        created = sim.condition(name, "Created")
        return (
            created is not None
            and "Blocked: pod lc-ordered-ps-0: Unschedulable" in (created["message"])
        )

    sim.wait_for(told, 20, "the PS told unschedulable")
    assert set(live_pods(sim, name)) == {"ps-0"}  # the workers wait for it


def test_an_ordered_start_runs_the_workers_once_the_ps_runs(sim, op):
    name = "lc-ordered-ok"
    job = sim.job(
        name,
        {"PS": {}, "Worker": {"replicas": 2, "annotations": finishing("0.3")}},
        cleanPodPolicy="None",  # the pods stay to be compared
        lifecyclePolicy={"startup": {"ordered": True}},
    )
    sim.create(job)
    sim.wait_condition(name, "Succeeded", 40)
    pods = {p["metadata"]["name"]: p for p in sim.pods(name)}
    ps_started = pods[f"{name}-ps-0"]["status"]["startTime"]
    for index in range(2):
        worker = pods[f"{name}-worker-{index}"]
        assert worker["metadata"]["creationTimestamp"] >= ps_started
