"""A node drained under a running job (``kubectl drain``), on a cluster of two nodes: the node
is cordoned, each pod on it evicted through the eviction API (``DisruptionTarget``, then a
graceful deletion), and a job with a failure policy and ``backoffLimit: 0`` recreates them on
the other node and succeeds without spending its budget (docs/policies.md, D102). A
PodDisruptionBudget at its minimum holds the drain back until it has a pod to spare (D106).

The local kubelets remove a stopped pod without writing a terminal phase first (D107), so the
operator sees an evicted pod go before it ends: it recreates it as a missing replica, which
neither counts nor records a cause (docs/policies.md)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from localcluster import testing
from localcluster.testing import BACKENDS
from support.crd import crd_objects

from .conftest import Api

pytestmark = pytest.mark.integration

RUN = "localcluster.tf-operator.io/run-seconds"
PODS = ("", "v1", "pods")
NODES = ("", "v1", "nodes")


@pytest.fixture(scope="module", params=BACKENDS)
def two_nodes(request) -> Iterator[Api]:
    from localcluster.cluster import LocalCluster, SimulatedTiming

    with LocalCluster(
        control_plane=request.param,
        kubelet="simulated",
        nodes=2,
        simulated=SimulatedTiming(start_delay=0.2),
        crds=crd_objects(),
    ) as cluster:
        yield Api(cluster)


class PodHistory:
    """Every state the job's pods were seen in, from a watch (a polled list could miss the
    short while an evicted pod carries its condition)."""

    def __init__(self, api: Api, job: str) -> None:
        self.seen: list[dict[str, Any]] = []
        self._stop = threading.Event()
        page = api.client.list(PODS, "default", label_selector=f"tf-job-name={job}")
        self.seen.extend(page.items)
        self._stream = api.client.watch(
            PODS,
            "default",
            resource_version=page.resource_version,
            label_selector=f"tf-job-name={job}",
        )
        self._thread = threading.Thread(target=self._run, name="pod-history", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            event = self._stream.get_shared(0.2)
            if event is not None:
                self.seen.append(event[1])

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._stream.stop()

    def disruption_of(self, uid: str) -> dict[str, Any] | None:
        """The DisruptionTarget condition the pod ``uid`` was seen with, if any."""
        for pod in self.seen:
            if pod["metadata"]["uid"] != uid:
                continue
            for condition in (pod.get("status") or {}).get("conditions") or []:
                if condition.get("type") == "DisruptionTarget":
                    return dict(condition)
        return None


def test_a_drained_node_moves_the_job_without_spending_its_budget(two_nodes, operators):
    api = two_nodes
    op = operators(api)
    api.wait_for(op.is_leader, 40, "leadership")
    name = "drain"
    job = api.job(
        name,
        {"PS": {}, "Worker": {"replicas": 2, "annotations": {RUN: "10"}}},
        backoffLimit=0,
        lifecyclePolicy={"failure": {}},
    )
    history = PodHistory(api, name)
    try:
        api.create(job)
        target = f"{name}-worker-1"

        def running() -> dict[str, Any] | None:
            pods = {p["metadata"]["name"]: p for p in api.pods(name)}
            pod = pods.get(target)
            return pod if pod and pod["status"].get("phase") == "Running" else None

        pod = api.wait_for(running, 60, "worker-1 runs")
        node, uid = pod["spec"]["nodeName"], pod["metadata"]["uid"]
        on_node = {
            p["metadata"]["name"]: p["metadata"]["uid"]
            for p in api.pods(name)
            if p["spec"].get("nodeName") == node
        }
        drained = testing.kubectl(
            api.cluster,
            "drain",
            node,
            "--ignore-daemonsets",
            "--delete-emptydir-data",
            "--timeout=90s",
            timeout=120,
            check=True,
        )
        out = drained.stdout + drained.stderr
        assert f"node/{node} cordoned" in out and f"node/{node} drained" in out, out
        assert api.client.get(NODES, None, node)["spec"].get("unschedulable") is True

        def moved() -> bool:
            pods = {p["metadata"]["name"]: p for p in api.pods(name)}
            return all(
                pods.get(n) is not None
                and pods[n]["metadata"]["uid"] != old
                and pods[n]["spec"].get("nodeName") not in (None, node)
                for n, old in on_node.items()
            )

        api.wait_for(moved, 60, "the drained node's pods recreated on the other node")
        api.wait_condition(name, "Succeeded", 90)
    finally:
        history.stop()
    # each pod of the node went through the eviction API, not a plain deletion
    for evicted_uid in on_node.values():
        condition = history.disruption_of(evicted_uid)
        assert condition is not None, f"pod {evicted_uid} was deleted without an eviction"
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "True",
            "EvictionByEvictionAPI",
            "Eviction API: evicting",
        )
    assert uid in on_node.values()
    status = api.get(name)["status"]
    assert (status.get("exitCodeRestarts") or {}).get("count", 0) == 0
    assert not any(c["type"] == "Failed" for c in status["conditions"])
    # seen going, not ended: recreated as missing, no cause recorded; a pod the operator saw
    # end with its condition would be a Disruption, never a counted cause
    assert set(status.get("restartsByCause") or {}) <= {"Disruption"}


DEPLOYMENTS = ("apps", "v1", "deployments")
PDBS = ("policy", "v1", "poddisruptionbudgets")


def uncordon_all(api: Api) -> None:
    for node in api.client.list(NODES).items:
        if node["spec"].get("unschedulable"):
            testing.kubectl(api.cluster, "uncordon", node["metadata"]["name"], check=True)


def test_a_drain_waits_for_the_disruption_budget(two_nodes):
    """A PodDisruptionBudget at its minimum keeps ``kubectl drain`` from evicting (429, retried
    until the drain times out), and the pod stays; once the budget has a pod to spare the same
    drain evicts it and its Deployment replaces it on the other node."""
    api = two_nodes
    uncordon_all(api)
    labels = {"app": "guarded"}
    deployment = {
        "metadata": {"name": "guarded"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "localcluster/none"}]},
            },
        },
    }
    api.client.create(DEPLOYMENTS, "default", deployment)
    budget = {
        "metadata": {"name": "guarded"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": labels}},
    }
    api.client.create(PDBS, "default", budget)

    def status() -> dict[str, Any]:
        return api.client.get(PDBS, "default", "guarded").get("status") or {}

    def counted(healthy: int, allowed: int) -> bool:
        current = api.client.get(PDBS, "default", "guarded")
        now = current.get("status") or {}
        return (
            now.get("observedGeneration") == current["metadata"]["generation"]
            and now.get("currentHealthy") == healthy
            and now.get("disruptionsAllowed") == allowed
        )

    api.wait_for(lambda: counted(2, 0), 60, "the budget at its minimum")
    pods = api.client.list(PODS, "default", label_selector="app=guarded").items
    pod = next(p for p in pods if p["spec"].get("nodeName"))
    node, uid = pod["spec"]["nodeName"], pod["metadata"]["uid"]
    refused = testing.kubectl(
        api.cluster, "drain", node, "--ignore-daemonsets", "--timeout=8s", timeout=60
    )
    assert refused.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget" in refused.stderr
    assert api.client.get(PODS, "default", pod["metadata"]["name"])["metadata"]["uid"] == uid
    assert not api.client.get(PODS, "default", pod["metadata"]["name"])["metadata"].get(
        "deletionTimestamp"
    )

    api.client.patch(PDBS, "default", "guarded", {"spec": {"minAvailable": 1}}, "merge")
    api.wait_for(lambda: status().get("disruptionsAllowed", 0) >= 1, 60, "a pod to spare")
    testing.kubectl(
        api.cluster, "drain", node, "--ignore-daemonsets", "--timeout=60s", timeout=90, check=True
    )

    def replaced() -> bool:
        now = api.client.list(PODS, "default", label_selector="app=guarded").items
        live = [p for p in now if not p["metadata"].get("deletionTimestamp")]
        return (
            uid not in {p["metadata"]["uid"] for p in now}
            and len(live) == 2
            and all(p["spec"].get("nodeName") not in (None, node) for p in live)
        )

    api.wait_for(replaced, 60, "the evicted pod replaced on the other node")
    api.wait_for(lambda: counted(2, 1), 60, "the budget counting the replacement")
