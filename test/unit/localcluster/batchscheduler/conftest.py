"""A local cluster with one batch-scheduler flavour driven by ``run_once`` (no periodic loop).

``gang(flavour, pools, conf=None)`` starts a simulated-kubelet ``LocalCluster`` whose nodes are
the given pools and returns a ``Gang`` with helpers to create PodGroups and pods the way the
spec's scenarios describe them (namespace ``default``, ``memory: 256Mi`` unless told).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from localcluster.batchscheduler import FLAVOURS
from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.kubelet.node import NodeConfig, register_node
from localcluster.nodepool import NodePool
from localcluster.testing import wait_for

PODS = ("", "v1", "pods")
EVENTS = ("", "v1", "events")
PRIORITY_CLASSES = ("scheduling.k8s.io", "v1", "priorityclasses")
NS = "default"


class Gang:
    """Helpers over one cluster and its batch scheduler."""

    def __init__(self, cluster: LocalCluster, flavour: str) -> None:
        self.cluster = cluster
        self.registry = cluster.registry
        self.client = cluster.client
        self.flavour = FLAVOURS[flavour]
        self.scheduler = cluster.batch_schedulers[flavour]

    # -- objects ----------------------------------------------------------------------

    def podgroup(self, name: str, min_member: int, flavour: str | None = None, **spec) -> dict:
        gvr = FLAVOURS[flavour].podgroups if flavour else self.flavour.podgroups
        body = {
            "apiVersion": f"{gvr[0]}/{gvr[1]}",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"minMember": min_member, **spec},
        }
        return self.registry.create(gvr, NS, body)

    def pod(
        self,
        name: str,
        group: str | None = None,
        cpu: str | None = None,
        memory: str | None = "256Mi",
        gpus: int | None = None,
        scheduler: str | None = None,
        annotations: dict | None = None,
        run_seconds: float | None = None,
        **spec,
    ) -> dict:
        requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
        resources: dict = {"requests": requests} if requests else {}
        if gpus:
            resources["limits"] = {"nvidia.com/gpu": str(gpus)}
        notes = dict(annotations or {})
        if group:
            notes["scheduling.k8s.io/group-name"] = group
        if run_seconds is not None:
            notes["localcluster.tf-operator.io/run-seconds"] = str(run_seconds)
        container = {"name": "c", "image": "localcluster/none", "resources": resources}
        body = {
            "metadata": {"name": name, "namespace": NS, "annotations": notes},
            "spec": {
                "schedulerName": scheduler or self.flavour.name,
                "containers": [container],
                **spec,
            },
        }
        return self.registry.create(PODS, NS, body)

    def priority_class(self, name: str, value: int) -> None:
        body = {"metadata": {"name": name}, "value": value}
        self.registry.create(PRIORITY_CLASSES, None, body)

    def queue(self, name: str, weight: int = 1) -> None:
        group, version, _ = self.flavour.queues
        body = {"apiVersion": f"{group}/{version}", "kind": "Queue", "metadata": {"name": name}}
        body["spec"] = {"weight": weight}
        self.registry.create(self.flavour.queues, None, body)

    def add_node(self, name: str, **config) -> None:
        register_node(self.client, NodeConfig(name, **config))

    # -- driving and reading ----------------------------------------------------------------

    def run(self, cycles: int = 1):
        summary = None
        for _ in range(cycles):
            summary = self.scheduler.run_once()
        return summary

    def get_pod(self, name: str) -> dict:
        return self.registry.get(PODS, NS, name)

    def node_of(self, name: str) -> str | None:
        return self.get_pod(name)["spec"].get("nodeName")

    def bound(self, *names: str) -> dict[str, str | None]:
        return {n: self.node_of(n) for n in names}

    def get_podgroup(self, name: str) -> dict:
        return self.registry.get(self.flavour.podgroups, NS, name)

    def phase(self, name: str) -> str | None:
        return (self.get_podgroup(name).get("status") or {}).get("phase")

    def condition(self, name: str, ctype: str = "Unschedulable") -> dict | None:
        for cond in (self.get_podgroup(name).get("status") or {}).get("conditions") or []:
            if cond["type"] == ctype:
                return cond
        return None

    def pod_condition(self, name: str, ctype: str = "PodScheduled") -> dict | None:
        for cond in (self.get_pod(name).get("status") or {}).get("conditions") or []:
            if cond["type"] == ctype:
                return cond
        return None

    def events(self, name: str, kind: str | None = None) -> list[dict]:
        items, _ = self.registry.list(EVENTS, NS)
        out = [
            e
            for e in items
            if e["involvedObject"].get("name") == name
            and (kind is None or e["involvedObject"].get("kind") == kind)
        ]
        return sorted(out, key=lambda e: int(e["metadata"]["resourceVersion"]))

    def wait_running(self, *names: str, timeout: float = 30.0) -> None:
        def running() -> bool:
            return all(self.get_pod(n)["status"].get("phase") == "Running" for n in names)

        wait_for(running, timeout, what=f"{names} Running")

    def wait_gone(self, *names: str, timeout: float = 30.0) -> None:
        def gone() -> bool:
            items, _ = self.registry.list(PODS, NS)
            return not {p["metadata"]["name"] for p in items} & set(names)

        wait_for(gone, timeout, what=f"{names} deleted")


@contextlib.contextmanager
def gang_cluster(
    flavour: str, pools: list[NodePool], conf=None, scheduler: bool = True
) -> Iterator[Gang]:
    with LocalCluster(
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.05),
        node_pools=pools,
        batch_schedulers=(flavour,),
        batch_scheduler_conf={flavour: conf} if conf else None,
        batch_schedule_period=0,
        scheduler=scheduler,
        endpoints=False,
    ) as cluster:
        yield Gang(cluster, flavour)


@pytest.fixture
def gang():
    stack = contextlib.ExitStack()

    def start(flavour: str, pools: list[NodePool], conf=None, scheduler: bool = True) -> Gang:
        return stack.enter_context(gang_cluster(flavour, pools, conf, scheduler))

    with stack:
        yield start
