"""The eviction subresource's PodDisruptionBudget arithmetic on a budget whose status a
disruption controller wrote (a bare registry runs none; the local cluster's: D106). What needs no budget
status is compared with kube-apiserver in
``integration/differential/test_differential.py::test_eviction``."""

from __future__ import annotations

from typing import Any

import pytest

from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.controlplane.emulated.eviction import evict

PODS = ("", "v1", "pods")
NODES = ("", "v1", "nodes")
PDBS = ("policy", "v1", "poddisruptionbudgets")
NS = "default"


@pytest.fixture
def reg():
    r = Registry(watch_history=50)
    r.create(NODES, None, {"metadata": {"name": "n"}})
    yield r
    r.stop()


def running(reg: Registry, name: str, ready: bool = True) -> None:
    body = {
        "metadata": {"name": name, "labels": {"app": "guarded"}},
        "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]},
    }
    created = reg.create(PODS, NS, body)
    created["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    reg.update(PODS, NS, name, created, "status")


def processed_budget(reg: Registry, allowed: int, healthy: int, desired: int) -> None:
    """A budget with the status its controller would write."""
    body = {
        "metadata": {"name": "strict"},
        "spec": {"minAvailable": desired, "selector": {"matchLabels": {"app": "guarded"}}},
    }
    created = reg.create(PDBS, NS, body)
    created["status"] = {
        "observedGeneration": created["metadata"]["generation"],
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": healthy,
    }
    reg.update(PDBS, NS, "strict", created, "status")


def eviction(name: str, **options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name},
    }
    if options:
        body["deleteOptions"] = options
    return body


def conditions(reg: Registry, name: str) -> dict[str, dict[str, Any]]:
    pod = reg.get(PODS, NS, name)
    return {c["type"]: c for c in pod["status"].get("conditions") or []}


def test_an_eviction_takes_one_disruption_and_the_next_is_refused(reg):
    running(reg, "a")
    running(reg, "b")
    processed_budget(reg, allowed=1, healthy=2, desired=1)
    assert evict(reg, NS, "a", eviction("a"), [])["status"] == "Success"
    pod = reg.get(PODS, NS, "a")
    assert pod["metadata"]["deletionTimestamp"]  # deleted gracefully: on a node
    target = conditions(reg, "a")["DisruptionTarget"]
    assert (target["status"], target["reason"], target["message"]) == (
        "True",
        "EvictionByEvictionAPI",
        "Eviction API: evicting",
    )
    status = reg.get(PDBS, NS, "strict")["status"]
    assert status["disruptionsAllowed"] == 0
    assert list(status["disruptedPods"]) == ["a"]
    allowed = {c["type"]: c for c in status["conditions"]}["DisruptionAllowed"]
    assert (allowed["status"], allowed["reason"]) == ("False", "InsufficientPods")

    with pytest.raises(StatusError) as refused:
        evict(reg, NS, "b", eviction("b"), [])
    assert refused.value.code == 429
    # the decremented status: two healthy, one wanted, none allowed now
    assert refused.value.status["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget strict does not allow evicting pods currently",
        }
    ]
    assert "DisruptionTarget" not in conditions(reg, "b")
    assert not reg.get(PODS, NS, "b")["metadata"].get("deletionTimestamp")


def test_a_dry_run_takes_nothing(reg):
    running(reg, "a")
    processed_budget(reg, allowed=1, healthy=2, desired=1)
    evict(reg, NS, "a", eviction("a"), ["All"])
    assert reg.get(PDBS, NS, "strict")["status"]["disruptionsAllowed"] == 1
    assert "DisruptionTarget" not in conditions(reg, "a")
    assert not reg.get(PODS, NS, "a")["metadata"].get("deletionTimestamp")


def test_an_unready_pod_goes_when_the_budget_has_its_healthy_pods(reg):
    running(reg, "sick", ready=False)
    processed_budget(reg, allowed=0, healthy=1, desired=1)
    evict(reg, NS, "sick", eviction("sick"), [])
    assert reg.get(PDBS, NS, "strict")["status"]["disruptionsAllowed"] == 0  # none taken
    assert conditions(reg, "sick")["DisruptionTarget"]["status"] == "True"


def test_a_budget_at_its_minimum_says_so(reg):
    running(reg, "a")
    processed_budget(reg, allowed=0, healthy=1, desired=1)
    with pytest.raises(StatusError) as refused:
        evict(reg, NS, "a", eviction("a"), [])
    assert refused.value.code == 429
    assert refused.value.status["details"]["causes"][0]["message"] == (
        "The disruption budget strict needs 1 healthy pods and has 1 currently"
    )


def test_a_negative_allowance_is_forbidden(reg):
    running(reg, "a")
    processed_budget(reg, allowed=-1, healthy=0, desired=1)
    with pytest.raises(StatusError) as refused:
        evict(reg, NS, "a", eviction("a"), [])
    assert refused.value.code == 403
    assert refused.value.message == (
        'poddisruptionbudget.policy "strict" is forbidden: pdb disruptions allowed is negative'
    )
