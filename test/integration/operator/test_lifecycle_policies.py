"""Lifecycle policies on the simulated kubelet (docs/policies.md): completion rules end the job
when training ends and stop the PS, evaluators are waited for, and the policy stays in force
through a full update by a client that does not know it (D100, D101)."""

import pytest

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
    live = sim.get(name)
    live["spec"] = {k: v for k, v in live["spec"].items() if k in V19_SPEC_FIELDS}
    edit(live)
    return sim.registry.update(TFJOBS, "default", name, live)


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
