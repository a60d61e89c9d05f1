"""A local cluster running scheduler-plugins (coscheduling scheduler and PodGroup controller)
beside the default scheduler, with helpers to create PodGroups and labelled pods."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.coscheduling import POD_GROUP_LABEL, PODGROUPS, SCHEDULER_NAME
from localcluster.kubelet.node import NodeConfig, register_node
from localcluster.nodepool import NodePool
from localcluster.testing import wait_for

PODS = ("", "v1", "pods")
EVENTS = ("", "v1", "events")
NS = "default"


class Cosched:
    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.registry = cluster.registry
        self.client = cluster.client
        assert cluster.coscheduling is not None
        self.scheduler = cluster.coscheduling

    def podgroup(self, name: str, min_member: int, **spec) -> dict:
        body = {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"minMember": min_member, **spec},
        }
        return self.registry.create(PODGROUPS, NS, body)

    def pod(
        self,
        name: str,
        group: str | None = None,
        cpu: str | None = "1",
        memory: str | None = None,
        scheduler: str = SCHEDULER_NAME,
        priority: int | None = None,
        run_seconds: float | None = None,
    ) -> dict:
        requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
        meta: dict = {"name": name, "namespace": NS}
        if group:
            meta["labels"] = {POD_GROUP_LABEL: group}
        if run_seconds is not None:
            meta["annotations"] = {"localcluster.tf-operator.io/run-seconds": str(run_seconds)}
        spec: dict = {
            "schedulerName": scheduler,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}],
        }
        if priority is not None:
            spec["priority"] = priority
        return self.registry.create(PODS, NS, {"metadata": meta, "spec": spec})

    def add_node(self, name: str, **config) -> None:
        register_node(self.client, NodeConfig(name, **config))

    def delete_pod(self, name: str) -> None:
        self.registry.delete(PODS, NS, name, grace_period_seconds=0)

    def get_pod(self, name: str) -> dict:
        return self.registry.get(PODS, NS, name)

    def node_of(self, name: str) -> str | None:
        return self.get_pod(name)["spec"].get("nodeName")

    def bound(self, *names: str) -> dict[str, str | None]:
        return {n: self.node_of(n) for n in names}

    def assumed_on(self, name: str) -> str | None:
        return self.scheduler.ledger.node_of(f"{NS}/{name}")

    def message(self, name: str) -> str | None:
        for condition in (self.get_pod(name).get("status") or {}).get("conditions") or []:
            if condition["type"] == "PodScheduled" and condition["status"] == "False":
                return condition["message"]
        return None

    def phase(self, group: str) -> str | None:
        return (self.registry.get(PODGROUPS, NS, group).get("status") or {}).get("phase")

    def events(self, name: str) -> list[dict]:
        items, _ = self.registry.list(EVENTS, NS)
        out = [e for e in items if e["involvedObject"].get("name") == name]
        return sorted(out, key=lambda e: int(e["metadata"]["resourceVersion"]))

    def wait_bound(self, *names: str, timeout: float = 30.0) -> None:
        wait_for(lambda: all(self.node_of(n) for n in names), timeout, what=f"{names} bound")

    def wait_waiting(self, *names: str, timeout: float = 30.0) -> None:
        keys = sorted(f"{NS}/{n}" for n in names)
        wait_for(
            lambda: self.scheduler.waiting_pods() == keys, timeout, what=f"{names} held at Permit"
        )

    def wait_event(self, name: str, message: str, timeout: float = 30.0) -> None:
        """Until the pod has had a FailedScheduling event with this message (its condition
        may have moved on by then)."""

        def told() -> bool:
            return any(
                e["reason"] == "FailedScheduling" and e["message"] == message
                for e in self.events(name)
            )

        wait_for(told, timeout, what=f"{name}: {message!r}")


@contextlib.contextmanager
def cosched_cluster(pools: list[NodePool], args: dict | None = None) -> Iterator[Cosched]:
    with LocalCluster(
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.05),
        node_pools=pools,
        scheduler_plugins=True,
        coscheduling_args=args,
        endpoints=False,
    ) as cluster:
        yield Cosched(cluster)


@pytest.fixture
def cosched():
    stack = contextlib.ExitStack()

    def start(pools: list[NodePool], args: dict | None = None) -> Cosched:
        return stack.enter_context(cosched_cluster(pools, args))

    with stack:
        yield start
