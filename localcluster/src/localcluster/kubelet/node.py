"""The Node object a kubelet registers: capacity, labels, Ready condition, addresses.

``NodeConfig`` holds the per-node settings from the command line;
``build_node`` turns it into a core/v1 Node; ``register_node`` creates it (or
refreshes it after a restart) and writes its status, since status is a
subresource the create may drop. ``renew_lease`` keeps a heartbeat Lease in
``kube-node-lease`` like kubelets since 1.14, when that namespace accepts it.
``report_status`` posts the conditions again as a kubelet's status loop does: when the stored
node is not Ready (a node lifecycle controller marked it ``Unknown`` after missed heartbeats)
or ``NODE_STATUS_REPORT_SECONDS`` have passed since the last post.
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from localcluster.apimachinery.objects import format_time
from localcluster.client.api import ClusterClient
from localcluster.client.informer import LEASES, NODES

logger = logging.getLogger(__name__)

KUBELET_VERSION = "v1.32.0"
GPU_RESOURCE = "nvidia.com/gpu"
NODE_LEASE_NAMESPACE = "kube-node-lease"
# A kubelet posts an unchanged node status this often (its nodeStatusReportFrequency).
NODE_STATUS_REPORT_SECONDS = 300.0


@dataclass
class NodeConfig:
    name: str
    cpu: str = "8"
    memory: str = "32Gi"
    gpus: int = 0
    pods: int = 110
    labels: dict[str, str] = field(default_factory=dict)
    address: str = "127.0.0.1"
    runtime: str = "simulated"
    taints: list[dict[str, Any]] = field(
        default_factory=list
    )  # core/v1 Taints, written to spec.taints
    # where the kubelets' HTTPS server listens (status.daemonEndpoints), 0 when none runs
    kubelet_port: int = 0


def _micro_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


def build_node(config: NodeConfig) -> dict[str, Any]:
    capacity = {
        "cpu": str(config.cpu),
        "memory": str(config.memory),
        "pods": str(config.pods),
        "ephemeral-storage": "100Gi",
    }
    if config.gpus:
        capacity[GPU_RESOURCE] = str(config.gpus)
    labels = {
        "kubernetes.io/hostname": config.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        **config.labels,
    }
    stamp = format_time(time.time())

    def condition(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
        return {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message,
            "lastHeartbeatTime": stamp,
            "lastTransitionTime": stamp,
        }

    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": config.name, "labels": labels},
        "spec": {"taints": [dict(t) for t in config.taints]} if config.taints else {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "ok"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "ok"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "ok"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [
                {"type": "InternalIP", "address": config.address},
                {"type": "Hostname", "address": config.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": config.kubelet_port}},
            "nodeInfo": {
                "machineID": config.name,
                "systemUUID": config.name,
                "bootID": config.name,
                "kernelVersion": "",
                "osImage": "tf-operator localcluster",
                "containerRuntimeVersion": f"localcluster://{config.runtime}",
                "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": KUBELET_VERSION,
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def register_node(client: ClusterClient, config: NodeConfig) -> dict[str, Any]:
    """Create or refresh the Node and set its status; returns the stored node."""
    desired = build_node(config)
    try:
        stored = client.create(NODES, None, copy.deepcopy(desired))
    except Exception as err:  # noqa: BLE001 - AlreadyExists after a restart: refresh it
        if getattr(err, "code", None) != 409:
            raise
        stored = client.get(NODES, None, config.name)
        stored["metadata"]["labels"] = desired["metadata"]["labels"]
        stored["spec"] = {**(stored.get("spec") or {}), **desired["spec"]}
        stored["metadata"].pop("resourceVersion", None)
        stored = client.update(NODES, None, config.name, stored)
    stored = copy.deepcopy(stored)
    stored["status"] = desired["status"]
    stored["metadata"].pop("resourceVersion", None)
    return client.update(NODES, None, config.name, stored, subresource="status")


def renew_lease(client: ClusterClient, node: dict[str, Any], duration_seconds: int = 40) -> None:
    """Create or renew the node's heartbeat Lease; failures are only logged."""
    name = node["metadata"]["name"]
    spec = {
        "holderIdentity": name,
        "leaseDurationSeconds": duration_seconds,
        "renewTime": _micro_now(),
    }
    try:
        try:
            lease = client.get(LEASES, NODE_LEASE_NAMESPACE, name)
        except Exception as err:  # noqa: BLE001
            if getattr(err, "code", None) != 404:
                raise
            owner = {
                "apiVersion": "v1",
                "kind": "Node",
                "name": name,
                "uid": node["metadata"].get("uid"),
            }
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": name,
                    "namespace": NODE_LEASE_NAMESPACE,
                    "ownerReferences": [owner],
                },
                "spec": spec,
            }
            client.create(LEASES, NODE_LEASE_NAMESPACE, body)
            return
        lease = copy.deepcopy(lease)
        lease["spec"].update(spec)
        client.update(LEASES, NODE_LEASE_NAMESPACE, name, lease)
    except Exception as err:  # noqa: BLE001 - heartbeats are optional
        logger.debug("node lease renewal for %s failed: %s", name, err)


def report_status(
    client: ClusterClient, config: NodeConfig, last_posted: float, now: float
) -> float:
    """Post the node's conditions again when the stored node is not Ready or the last post
    is ``NODE_STATUS_REPORT_SECONDS`` old; returns when it last posted. Failures are logged."""
    try:
        node = client.get(NODES, None, config.name, shared=True)
        conditions = (node.get("status") or {}).get("conditions") or []
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        if ready and now - last_posted < NODE_STATUS_REPORT_SECONDS:
            return last_posted
        status = build_node(config)["status"]
        patch = {"status": {"conditions": status["conditions"]}}
        client.patch(NODES, None, config.name, patch, "strategic", subresource="status")
        if not ready:
            logger.info("node %s was not Ready in the API; reported Ready again", config.name)
        return now
    except Exception as err:  # noqa: BLE001 - retried at the next heartbeat
        logger.debug("node status report for %s failed: %s", config.name, err)
        return last_posted
