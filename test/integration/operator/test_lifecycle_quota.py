"""A pod create refused for a ResourceQuota is told on the job (docs/policies.md, D157,
D111): with a quota too small for the job, the API server refuses a replica's pod with
403 Forbidden ("exceeded quota: ..."); the job's Created condition and a Warning event say so;
once the quota is raised the pod is created, the job runs and the reason goes. On both control
planes: kube-apiserver's ResourceQuota admission plugin (on by default), and the emulator's own
(pod count and compute requests and limits)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.integration

RUN = "localcluster.tf-operator.io/run-seconds"
QUOTAS = ("", "v1", "resourcequotas")
NS = "default"
# kube-apiserver's words, with the quota's name and the pod counts; the pod refused is whichever
# of the job's three the operator's concurrent creates sent last
REFUSAL = re.compile(
    r'the API server refuses: pods "(lc-quota-(?:ps|worker)-\d)" is forbidden: '
    r"exceeded quota: small, requested: pods=1, used: pods=2, limited: pods=2"
)


@pytest.fixture(scope="module")
def op(sim, module_operator):
    operator = module_operator(sim, "--threadiness=2")
    sim.wait_for(operator.is_leader, 30, "leadership")
    return operator


def quota_in_force(sim, name: str, pods: str) -> bool:
    """The quota's hard limit is what admission enforces: kube-controller-manager's quota
    controller must have written it into the status (until then kube-apiserver refuses every
    pod with "status unknown for quota"); the emulator enforces the spec at once."""
    quota = sim.client.get(QUOTAS, NS, name)
    if sim.control_plane != "real":
        return quota["spec"]["hard"]["pods"] == pods
    status = quota.get("status") or {}
    return (status.get("hard") or {}).get("pods") == pods and "pods" in (status.get("used") or {})


def created_message(sim, name: str) -> str:
    created = sim.condition(name, "Created")
    return "" if created is None else created["message"]


def test_a_quota_refusal_is_told_and_goes_once_the_quota_is_raised(sim, op):
    quota = {"metadata": {"name": "small"}, "spec": {"hard": {"pods": "2"}}}
    sim.client.create(QUOTAS, NS, quota)
    sim.wait_for(lambda: quota_in_force(sim, "small", "2"), 30, "the quota in force")
    name = "lc-quota"
    job = sim.job(
        name,
        {
            "PS": {"annotations": {RUN: "600"}},
            "Worker": {"replicas": 2, "annotations": {RUN: "600"}},
        },
        lifecyclePolicy={"startup": {}},
    )
    sim.create(job)
    told = sim.wait_for(
        lambda: (m := created_message(sim, name)) and REFUSAL.search(m) and m, 60, "refusal told"
    )
    refusal = REFUSAL.search(told)
    assert refusal is not None and told == f"TFJob {name} is created. Blocked: {refusal[0]}"
    sim.wait_for(
        lambda: any(
            e["type"] == "Warning" and e["reason"] == "CreateRefused" and e["message"] == refusal[0]
            for e in sim.events(name)
        ),
        30,
        "the Warning event",
    )
    every = {f"{name}-ps-0", f"{name}-worker-0", f"{name}-worker-1"}
    assert {p["metadata"]["name"] for p in sim.pods(name)} == every - {refusal[1]}

    live = sim.client.get(QUOTAS, NS, "small")
    live["spec"]["hard"]["pods"] = "3"
    sim.client.update(QUOTAS, NS, "small", live)
    sim.wait_for(
        lambda: {p["metadata"]["name"] for p in sim.pods(name)} == every,
        90,
        "the refused pod created once the quota allows it",
    )
    sim.wait_for(
        lambda: created_message(sim, name) == f"TFJob {name} is created.", 60, "the reason gone"
    )
    sim.wait_condition(name, "Running", 30)
