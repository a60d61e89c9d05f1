"""The scheduler loop against the in-process Registry (threads, no HTTP, no processes)."""

import threading
import uuid

import pytest

from localcluster.client.inprocess import InProcessClient
from localcluster.controlplane.emulated import Registry
from localcluster.kubelet.node import NodeConfig, register_node
from localcluster.scheduler import Scheduler
from localcluster.testing import wait_for, wait_for_pod

PODS = ("", "v1", "pods")


@pytest.fixture
def cluster():
    registry = Registry()
    stop = threading.Event()
    scheduler = Scheduler(InProcessClient(registry), retry_seconds=30)
    scheduler.start(stop)
    yield registry
    stop.set()
    scheduler.join(2)
    registry.stop()


def make_pod(registry, name, cpu=None, gpus=None, scheduler_name=None, selector=None):
    resources = {}
    if cpu:
        resources.setdefault("requests", {})["cpu"] = cpu
    if gpus:
        resources.setdefault("limits", {})["nvidia.com/gpu"] = gpus
    spec = {"containers": [{"name": "c", "image": "x", "resources": resources}]}
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    if selector:
        spec["nodeSelector"] = selector
    registry.create(PODS, "default", {"metadata": {"name": name}, "spec": spec})


def node_of(pod):
    return pod["spec"].get("nodeName")


def scheduled_condition(pod):
    for condition in pod["status"].get("conditions") or []:
        if condition["type"] == "PodScheduled":
            return condition
    return None


def test_unschedulable_gpu_pod_waits_for_a_gpu_node(cluster):
    register_node(cluster, NodeConfig("cpu-0"))
    register_node(cluster, NodeConfig("cpu-1"))
    make_pod(cluster, "gpu-pod", gpus="1")
    expected = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    # the message may first count fewer nodes if the scheduler saw the pod before a node
    pod = wait_for_pod(
        cluster,
        "default",
        "gpu-pod",
        lambda p: (scheduled_condition(p) or {}).get("message") == expected,
    )
    condition = scheduled_condition(pod)
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert pod["status"]["phase"] == "Pending"

    register_node(cluster, NodeConfig("gpu-0", gpus=2))
    pod = wait_for_pod(cluster, "default", "gpu-pod", node_of)
    assert node_of(pod) == "gpu-0"
    assert scheduled_condition(pod)["status"] == "True"


def test_resources_are_freed_when_pods_finish(cluster):
    register_node(cluster, NodeConfig("small", cpu="2"))
    for name in ("a", "b", "c"):
        make_pod(cluster, name, cpu="1")

    def settled():
        pods = [cluster.get(PODS, "default", n) for n in ("a", "b", "c")]
        bound = [p for p in pods if node_of(p)]
        waiting = [p for p in pods if not node_of(p) and "cpu" in str(scheduled_condition(p))]
        return (bound, waiting[0]) if len(bound) == 2 and len(waiting) == 1 else None

    bound, pending = wait_for(settled)
    assert "1 Insufficient cpu" in scheduled_condition(pending)["message"]

    done = bound[0]
    done["status"]["phase"] = "Succeeded"
    cluster.update(PODS, "default", done["metadata"]["name"], done, subresource="status")
    name = pending["metadata"]["name"]
    assert node_of(wait_for_pod(cluster, "default", name, node_of)) == "small"


def test_node_selector_and_foreign_schedulers(cluster):
    register_node(cluster, NodeConfig("plain"))
    register_node(cluster, NodeConfig("special", labels={"pool": "special"}))
    make_pod(cluster, "picky", selector={"pool": "special"})
    make_pod(cluster, "batch", scheduler_name="kube-batch")
    assert node_of(wait_for_pod(cluster, "default", "picky", node_of)) == "special"
    make_pod(cluster, "marker")
    wait_for_pod(cluster, "default", "marker", node_of)
    batch = cluster.get(PODS, "default", "batch")
    assert node_of(batch) is None and scheduled_condition(batch) is None


def test_pods_fill_every_node(cluster):
    register_node(cluster, NodeConfig("n0", cpu="2"))
    register_node(cluster, NodeConfig("n1", cpu="2"))
    for i in range(4):
        make_pod(cluster, f"p{i}", cpu="1")
    nodes = [node_of(wait_for_pod(cluster, "default", f"p{i}", node_of)) for i in range(4)]
    assert sorted(nodes) == ["n0", "n0", "n1", "n1"]


def store_unvalidated(registry, namespace, pod):
    """Write a pod straight into the store, as a buggy client past validation would leave it."""
    pod = {"apiVersion": "v1", "kind": "Pod", **pod}
    meta = pod["metadata"]
    meta.update(namespace=namespace, uid=str(uuid.uuid4()))
    meta["creationTimestamp"] = "2024-01-01T00:00:00Z"
    pod.setdefault("status", {"phase": "Pending"})
    rt = registry.resolve(PODS)
    with registry.store.lock:
        registry.store.commit(rt, (namespace, meta["name"]), pod, "ADDED", None)


def test_a_malformed_pod_is_reported_and_never_stops_the_loop(cluster):
    register_node(cluster, NodeConfig("n0", cpu="2"))
    bad = {"name": "c", "image": "x", "resources": {"requests": {"cpu": "lots"}}}
    store_unvalidated(
        cluster, "default", {"metadata": {"name": "bad"}, "spec": {"containers": [bad]}}
    )
    weird = {"nodeSelectorTerms": "not-a-list"}
    store_unvalidated(
        cluster,
        "default",
        {
            "metadata": {"name": "weird"},
            "spec": {
                "containers": [{"name": "c", "image": "x"}],
                "affinity": {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": weird}
                },
            },
        },
    )
    bound_bad = {"metadata": {"name": "bound-bad"}, "spec": {"containers": [bad], "nodeName": "n0"}}
    store_unvalidated(cluster, "default", bound_bad)
    make_pod(cluster, "later", cpu="2")

    assert node_of(wait_for_pod(cluster, "default", "later", node_of)) == "n0"

    def failed_scheduling() -> dict[str, list[dict]]:
        events, _ = cluster.list(("", "v1", "events"), "default")
        out: dict[str, list[dict]] = {}
        for e in events:
            if e["reason"] == "FailedScheduling":
                out.setdefault(e["involvedObject"]["name"], []).append(e)
        return out if {"bad", "weird"} <= set(out) else {}

    reported = wait_for(failed_scheduling)
    assert "invalid quantity 'lots'" in reported["bad"][0]["message"]
    assert len(reported["bad"]) == 1 and reported["bad"][0]["type"] == "Warning"
    # the API server may refuse to write the status of an object that fails validation;
    # where it did accept it, the condition says SchedulerError
    for name in ("bad", "weird"):
        condition = scheduled_condition(cluster.get(PODS, "default", name))
        if condition is not None:
            assert (condition["status"], condition["reason"]) == ("False", "SchedulerError")


def test_taints_keep_pods_off_unless_tolerated(cluster):
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    register_node(cluster, NodeConfig("gpu-0", gpus=1, taints=[taint]))
    make_pod(cluster, "plain")
    expected = "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}."
    pod = wait_for_pod(
        cluster,
        "default",
        "plain",
        lambda p: (scheduled_condition(p) or {}).get("message") == expected,
    )
    assert node_of(pod) is None
    toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    spec = {"containers": [{"name": "c", "image": "x"}], "tolerations": [toleration]}
    cluster.create(PODS, "default", {"metadata": {"name": "tolerant"}, "spec": spec})
    assert node_of(wait_for_pod(cluster, "default", "tolerant", node_of)) == "gpu-0"
