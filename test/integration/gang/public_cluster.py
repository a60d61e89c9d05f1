"""A cluster seen only through its kubeconfig, for tests that must pass on the emulator and on
a real control plane alike (Kubernetes' own gang scheduling: the real kube-scheduler's
``GangScheduling`` against the emulator's default scheduler).

``cluster_with_nodes(pools, control_plane)`` is the one place that knows which cluster runs:
``"emulated"``, the local cluster (simulated kubelets, the emulated API server and default
scheduler); ``"real"``, etcd, kube-apiserver, kube-controller-manager and kube-scheduler v1.37
(``LocalCluster(control_plane="real")``, which starts them with ``localcluster.features``'
gates and runtime config) with the local cluster's simulated kubelets registering the same
nodes over HTTP (the test is skipped when the real control plane cannot be built here). Everything a test does after
that goes through :class:`PublicCluster`: our API client over the kubeconfig, the shipped CRDs
applied through the API, and the ``tf-operator`` binary started against the same kubeconfig.

Pods run until deleted; a pod whose template carries ``RUN_SECONDS`` ends Succeeded after that
many seconds (the simulated kubelet's convention, which the real control plane's node agents
keep).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.nodepool import NodePool
from localcluster.testing import wait_for
from support.crd import crd_objects
from tf_operator.k8s.client import KubeClient, Resource, is_not_found, load_kube_client

NS = "default"
RUN_SECONDS = "localcluster.tf-operator.io/run-seconds"
TFJOBS = Resource("kubeflow.org", "v1", "tfjobs", "TFJob")
PODS = Resource("", "v1", "pods", "Pod")
EVENTS = Resource("", "v1", "events", "Event")
WORKLOADS = Resource("scheduling.k8s.io", "v1beta1", "workloads", "Workload")
POD_GROUPS = Resource("scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup")
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
CONTROL_PLANES = ("emulated", "real")


@dataclass
class PublicCluster:
    """A running cluster, known by its kubeconfig only."""

    kubeconfig: str
    client: KubeClient

    def items(self, resource: Resource, selector: str | None = None) -> list[dict[str, Any]]:
        return list(self.client.resource(resource).list(NS, label_selector=selector)["items"])

    def get(self, resource: Resource, name: str) -> dict[str, Any] | None:
        try:
            return self.client.resource(resource).get(name, NS)
        except Exception as err:
            if is_not_found(err):
                return None
            raise

    def job_pods(self, job: str) -> list[dict[str, Any]]:
        """The job's pods that are not being deleted."""
        return [
            p
            for p in self.items(PODS, f"tf-job-name={job}")
            if not p["metadata"].get("deletionTimestamp")
        ]

    def job_groups(self, job: str) -> list[dict[str, Any]]:
        """The PodGroups whose controller is the TFJob ``job``."""
        return [g for g in self.items(POD_GROUPS) if _controller_name(g) == job]

    def job_workloads(self, job: str) -> list[dict[str, Any]]:
        return [w for w in self.items(WORKLOADS) if _controller_name(w) == job]

    def wait_for_default_service_account(self) -> None:
        """Pods are refused until kube-controller-manager has made it (the emulator has it)."""
        wait_for(
            lambda: self.get(SERVICE_ACCOUNTS, "default") is not None,
            60,
            what="the default ServiceAccount",
        )


def _controller_name(obj: dict[str, Any]) -> str:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "TFJob":
            return str(ref.get("name"))
    return ""


@contextlib.contextmanager
def cluster_with_nodes(
    pools: list[NodePool], control_plane: str = "emulated"
) -> Iterator[PublicCluster]:
    """A cluster whose nodes are ``pools``, the TFJob CRD installed (see the module docstring)."""
    from localcluster.controlplane.real import ControlPlaneUnavailable

    with contextlib.ExitStack() as stack:
        try:
            cluster = stack.enter_context(
                LocalCluster(
                    kubelet="simulated",
                    simulated=SimulatedTiming(start_delay=0.1),
                    node_pools=pools,
                    control_plane=control_plane,
                    crds=crd_objects(),
                )
            )
        except ControlPlaneUnavailable as err:
            pytest.skip(f"the real control plane is not available: {err}")
        client = load_kube_client(cluster.kubeconfig)
        stack.callback(client.close)
        public = PublicCluster(cluster.kubeconfig, client)
        public.wait_for_default_service_account()
        yield public


def tfjob(
    name: str,
    workers: int,
    cpu: str,
    *,
    min_available: int | None = None,
    run_seconds: float | None = None,
    suspend: bool | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A TFJob of ``workers`` workers asking ``cpu`` each."""
    container = {"name": "tensorflow", "image": "localcluster/none"}
    container["resources"] = {"requests": {"cpu": cpu}}
    template: dict[str, Any] = {"spec": {"containers": [container]}}
    if run_seconds is not None:
        template["metadata"] = {"annotations": {RUN_SECONDS: str(run_seconds)}}
    run_policy: dict[str, Any] = {}
    if min_available is not None:
        run_policy["schedulingPolicy"] = {"minAvailable": min_available}
    if suspend is not None:
        run_policy["suspend"] = suspend
    spec: dict[str, Any] = {
        "tfReplicaSpecs": {"Worker": {"replicas": workers, "template": template}}
    }
    if run_policy:
        spec["runPolicy"] = run_policy
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": metadata, "spec": spec}


def condition(obj: dict[str, Any] | None, ctype: str) -> dict[str, Any] | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return None
