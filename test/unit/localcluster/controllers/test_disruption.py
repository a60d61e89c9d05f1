"""The disruption controller: a budget's status from its pods, the evictions it then allows,
disrupted pods forgotten when they were not deleted, stale DisruptionTarget conditions reset.
What kube-controller-manager's writes for the same budgets is compared in
``integration/differential/test_differential.py::test_eviction_under_a_budget``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from localcluster.client.inprocess import InProcessClient
from localcluster.controllers.disruption import DisruptionController
from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.controlplane.emulated.eviction import evict
from localcluster.testing import wait_for

PODS = ("", "v1", "pods")
NODES = ("", "v1", "nodes")
PDBS = ("policy", "v1", "poddisruptionbudgets")
NS = "default"
START = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cluster(clock: Clock) -> Iterator[tuple[Registry, DisruptionController]]:
    registry = Registry(clock=clock)
    registry.create(NODES, None, {"metadata": {"name": "n"}})
    stop = threading.Event()
    controller = DisruptionController(InProcessClient(registry, clock=clock), clock=clock)
    controller.start(stop)
    try:
        yield registry, controller
    finally:
        stop.set()
        registry.stop()


def running(registry: Registry, name: str, ready: bool = True, **meta: Any) -> None:
    body = {
        "metadata": {"name": name, "labels": {"app": "guarded"}, **meta},
        "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]},
    }
    created = registry.create(PODS, NS, body)
    created["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    registry.update(PODS, NS, name, created, "status")


def budget(registry: Registry, **spec: Any) -> None:
    selector = {"matchLabels": {"app": "guarded"}}
    registry.create(PDBS, NS, {"metadata": {"name": "b"}, "spec": {"selector": selector, **spec}})


def status(registry: Registry) -> dict[str, Any]:
    return registry.get(PDBS, NS, "b").get("status") or {}


def settled(registry: Registry, **expected: Any) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        now = status(registry)
        fresh = now.get("observedGeneration") == 1
        return now if fresh and all(now.get(k) == v for k, v in expected.items()) else None

    result: dict[str, Any] = wait_for(done, 10, what=f"the budget at {expected}")
    return result


def eviction(name: str) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}


def test_a_budget_counts_its_healthy_pods_and_allows_what_is_beyond_its_minimum(cluster):
    registry, _ = cluster
    running(registry, "a")
    running(registry, "b")
    running(registry, "sick", ready=False)
    budget(registry, minAvailable=1)
    now = settled(
        registry, currentHealthy=2, desiredHealthy=1, expectedPods=3, disruptionsAllowed=1
    )
    allowed = {c["type"]: c for c in now["conditions"]}["DisruptionAllowed"]
    assert (allowed["status"], allowed["reason"], allowed["observedGeneration"]) == (
        "True",
        "SufficientPods",
        1,
    )
    evict(registry, NS, "a", eviction("a"), [])
    # the pod goes (deleting): not healthy; the budget is at its minimum again
    now = settled(registry, currentHealthy=1, disruptionsAllowed=0)
    assert not now.get("disruptedPods")  # a deleting pod is no longer noted
    with pytest.raises(StatusError) as refused:
        evict(registry, NS, "b", eviction("b"), [])
    assert refused.value.code == 429


def test_a_pod_let_go_but_not_deleted_is_forgotten_after_two_minutes(cluster, clock):
    registry, controller = cluster
    running(registry, "a")
    running(registry, "b")
    budget(registry, minAvailable=1)
    current = settled(registry, disruptionsAllowed=1)
    # what the eviction subresource writes before the deletion that, here, never comes
    body = registry.get(PDBS, NS, "b")
    body["status"] = {
        **current,
        "disruptionsAllowed": 0,
        "disruptedPods": {"a": registry.store.now()},
    }
    registry.update(PDBS, NS, "b", body, "status")
    assert controller.sync(f"{NS}/b") == pytest.approx(120.0)  # looked at again then
    assert status(registry)["currentHealthy"] == 1  # "a" counted as going
    clock.now += 121
    assert controller.sync(f"{NS}/b") is None
    assert status(registry)["currentHealthy"] == 2
    assert not status(registry).get("disruptedPods")
    assert status(registry)["disruptionsAllowed"] == 1


def test_a_percentage_of_a_pod_without_a_known_controller_fails_to_count(cluster):
    registry, _ = cluster
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "u", "controller": True}
    running(registry, "a", ownerReferences=[ref])
    budget(registry, maxUnavailable="50%")

    def failed() -> dict[str, Any] | None:
        for c in status(registry).get("conditions") or []:
            if c["reason"] == "SyncFailed":
                return dict(c)
        return None

    condition = wait_for(failed, 10, what="the budget failing")
    assert condition["message"] == 'found no controllers for pod "a"'
    assert status(registry)["disruptionsAllowed"] == 0


def test_a_stale_disruption_target_is_reset_after_two_minutes(cluster, clock):
    registry, controller = cluster
    running(registry, "a")
    pod = registry.get(PODS, NS, "a")
    pod["status"]["conditions"].append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "EvictionByEvictionAPI",
            "lastTransitionTime": registry.store.now(),
        }
    )
    registry.update(PODS, NS, "a", pod, "status")
    assert controller.sync_stale(f"{NS}/a") == pytest.approx(120.0)
    clock.now += 121
    assert controller.sync_stale(f"{NS}/a") is None
    conditions = {c["type"]: c for c in registry.get(PODS, NS, "a")["status"]["conditions"]}
    assert conditions["DisruptionTarget"]["status"] == "False"
    assert conditions["Ready"]["status"] == "True"
