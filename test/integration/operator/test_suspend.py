"""training-operator v1.9's runPolicy.suspend and runPolicy.managedBy against the real operator
on the simulated cluster (D61, D63): a job created suspended gets nothing; suspending a running
job takes its pods and services away and resuming brings them back with a new startTime (the
pod templates edited meanwhile, as Kueue does when it admits a job again); a job managed by
another controller is left entirely alone."""

from __future__ import annotations

import pytest

from support.edits import edit

from .conftest import EVENTS, NS, TFJOBS

pytestmark = pytest.mark.integration

RUN = "localcluster.tf-operator.io/run-seconds"


@pytest.fixture(scope="module")
def op(sim, module_operator):
    operator = module_operator(sim, "--threadiness=2")
    sim.wait_for(operator.is_leader, 30, "leadership")
    return operator


def conditions(sim, name: str) -> list[tuple[str, str, str]]:
    status = sim.get(name).get("status") or {}
    return [(c["type"], c["status"], c.get("reason", "")) for c in status.get("conditions") or []]


def set_suspend(sim, name: str, suspend: bool, run_seconds: str | None = None) -> None:
    def change(job: dict) -> None:
        job["spec"]["runPolicy"]["suspend"] = suspend
        if run_seconds is not None:
            for spec in job["spec"]["tfReplicaSpecs"].values():
                spec["template"]["metadata"]["annotations"][RUN] = run_seconds

    edit(sim.client, TFJOBS, NS, name, change)


def test_a_job_created_suspended_gets_nothing_until_resumed(sim, op):
    job = sim.job("born-suspended", {"PS": {}, "Worker": {"annotations": {RUN: "0.2"}}})
    job["spec"]["runPolicy"] = {"suspend": True}
    sim.create(job)
    sim.wait_for(
        lambda: (
            conditions(sim, "born-suspended")
            == [("Created", "True", "TFJobCreated"), ("Suspended", "True", "TFJobSuspended")]
        ),
        30,
        "Created then Suspended",
    )
    assert sim.pods("born-suspended") == [] and sim.services("born-suspended") == []
    assert "startTime" not in sim.get("born-suspended")["status"]
    set_suspend(sim, "born-suspended", False)
    sim.wait_condition("born-suspended", "Succeeded", 30)
    assert ("Suspended", "False", "TFJobResumed") in conditions(sim, "born-suspended")


def test_suspend_and_resume_a_running_job(sim, op):
    long = {"annotations": {RUN: "600"}}
    job = sim.job("pausable", {"PS": long, "Worker": {"replicas": 2, **long}})
    job["spec"]["runPolicy"] = {"cleanPodPolicy": "None", "ttlSecondsAfterFinished": 600}
    sim.create(job)
    sim.wait_condition("pausable", "Running", 30)
    sim.wait_for(
        lambda: (
            all(p["status"].get("phase") == "Running" for p in sim.pods("pausable"))
            and len(sim.pods("pausable")) == 3
        ),
        30,
        "3 running pods",
    )
    started = sim.get("pausable")["status"]["startTime"]

    set_suspend(sim, "pausable", True)
    sim.wait_for(lambda: sim.pods("pausable") == [], 30, "pods deleted on suspension")
    sim.wait_for(lambda: sim.services("pausable") == [], 30, "services deleted")
    sim.wait_condition("pausable", "Suspended", 30)
    status = sim.get("pausable")["status"]
    assert all(not counts.get("active") for counts in status["replicaStatuses"].values())
    assert ("Running", "False", "TFJobSuspended") in conditions(sim, "pausable")
    assert status["startTime"] == started
    assert not sim.condition("pausable", "Failed")
    sim.wait_for(
        lambda: any(e["reason"] == "TFJobSuspended" for e in sim.events("pausable")),
        30,
        "the TFJobSuspended event",
    )

    # resumed with shorter pods, as an admission may rewrite the templates while suspended
    set_suspend(sim, "pausable", False, run_seconds="0.3")
    sim.wait_condition("pausable", "Succeeded", 60)
    status = sim.get("pausable")["status"]
    assert status["startTime"] > started
    assert ("Suspended", "False", "TFJobResumed") in conditions(sim, "pausable")


def test_a_job_managed_elsewhere_is_left_alone(sim, op):
    job = sim.job("elsewhere", {"Worker": {"annotations": {RUN: "0.2"}}})
    job["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
    sim.create(job)
    # a job created after it runs to the end: the operator has seen both by then
    sim.create(sim.job("after-elsewhere", {"Worker": {"annotations": {RUN: "0.2"}}}))
    sim.wait_condition("after-elsewhere", "Succeeded", 30)
    assert "status" not in sim.get("elsewhere")
    assert sim.pods("elsewhere") == [] and sim.services("elsewhere") == []
    items = sim.client.list(EVENTS, NS).items
    assert [e for e in items if e["involvedObject"].get("name") == "elsewhere"] == []
