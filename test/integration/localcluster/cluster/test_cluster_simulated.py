"""LocalCluster with the simulated kubelet: lifecycle, restarts, scheduling, endpoints."""

import pytest

from localcluster import LocalCluster, NodeSpec, SimulatedTiming
from localcluster.kubelet import EXIT_CODE, RUN_SECONDS
from localcluster.testing import (
    cluster_fixture,
    kubectl,
    pod_phase_is,
    wait_for,
    wait_for_pod,
)

pytestmark = pytest.mark.integration

PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")
ENDPOINTS = ("", "v1", "endpoints")


cluster = cluster_fixture(
    kubelet="simulated",
    nodes=2,
    node=NodeSpec(cpu="4", labels={"pool": "sim"}),
    simulated=SimulatedTiming(start_delay=0.1, restart_delay=0.1),
)


def create_pod(cluster, name, annotations=None, restart_policy="Never", labels=None, **spec):
    pod = {
        "metadata": {"name": name, "annotations": annotations or {}, "labels": labels or {}},
        "spec": {
            "restartPolicy": restart_policy,
            "containers": [{"name": "main", "image": "busybox"}],
            **spec,
        },
    }
    return cluster.registry.create(PODS, "default", pod)


def test_nodes_are_registered_with_capacity_and_labels(cluster):
    nodes, _ = cluster.registry.list(("", "v1", "nodes"))
    assert [n["metadata"]["name"] for n in nodes] == cluster.node_names
    node = nodes[0]
    assert node["status"]["allocatable"]["cpu"] == "4"
    assert node["metadata"]["labels"]["pool"] == "sim"
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == node["metadata"]["name"]
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready[0]["status"] == "True"
    lease = cluster.registry.get(
        ("coordination.k8s.io", "v1", "leases"), "kube-node-lease", node["metadata"]["name"]
    )
    assert lease["spec"]["holderIdentity"] == node["metadata"]["name"]


def test_pod_runs_to_succeeded(cluster):
    create_pod(cluster, "sim-ok", {RUN_SECONDS: "0.3"})
    running = wait_for_pod(cluster.registry, "default", "sim-ok", pod_phase_is("Running"))
    assert running["spec"]["nodeName"] in cluster.node_names
    assert running["status"]["podIP"].startswith("127.")
    done = wait_for_pod(cluster.registry, "default", "sim-ok", pod_phase_is("Succeeded"))
    terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")


def test_on_failure_pod_restarts_then_succeeds(cluster):
    create_pod(cluster, "sim-retry", {RUN_SECONDS: "0.2", EXIT_CODE: "2,0"}, "OnFailure")
    done = wait_for_pod(cluster.registry, "default", "sim-retry", pod_phase_is("Succeeded"))
    status = done["status"]["containerStatuses"][0]
    assert status["restartCount"] == 1
    assert status["lastState"]["terminated"]["exitCode"] == 2
    assert status["state"]["terminated"]["exitCode"] == 0


def test_unschedulable_pod_gets_the_condition(cluster):
    create_pod(
        cluster,
        "sim-gpu",
        containers=[
            {"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
        ],
    )

    def unschedulable(pod):
        return any(
            c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
            for c in pod["status"].get("conditions") or []
        )

    pod = wait_for_pod(cluster.registry, "default", "sim-gpu", unschedulable)
    condition = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert condition["status"] == "False"
    assert condition["message"] == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    assert pod["status"]["phase"] == "Pending"
    events = kubectl(cluster, "get", "events", "-o", "jsonpath={.items[*].reason}").stdout
    assert "FailedScheduling" in events


def test_endpoints_follow_ready_pods(cluster):
    cluster.registry.create(
        SERVICES,
        "default",
        {
            "metadata": {"name": "sim-svc"},
            "spec": {"clusterIP": "None", "selector": {"app": "sim"}, "ports": [{"port": 2222}]},
        },
    )
    create_pod(cluster, "sim-a", labels={"app": "sim"})
    create_pod(cluster, "sim-b", labels={"app": "sim"})
    ip = {
        n: wait_for_pod(cluster.registry, "default", n, pod_phase_is("Running"))["status"]["podIP"]
        for n in ("sim-a", "sim-b")
    }

    def ready_ips():
        endpoints = cluster.registry.get(ENDPOINTS, "default", "sim-svc")
        return {a["ip"] for s in endpoints.get("subsets") or [] for a in s.get("addresses") or []}

    wait_for(lambda: ready_ips() == set(ip.values()), 10)
    subsets = cluster.registry.get(ENDPOINTS, "default", "sim-svc")["subsets"]
    assert subsets[0]["ports"] == [{"port": 2222, "protocol": "TCP"}]
    assert {a["targetRef"]["name"] for a in subsets[0]["addresses"]} == {"sim-a", "sim-b"}
    cluster.registry.delete(PODS, "default", "sim-a")
    wait_for(lambda: ready_ips() == {ip["sim-b"]}, 10)


def test_graceful_delete_is_finished_by_the_kubelet(cluster):
    create_pod(cluster, "sim-del")
    wait_for_pod(cluster.registry, "default", "sim-del", pod_phase_is("Running"))
    result = kubectl(cluster, "delete", "pod", "sim-del", "--timeout=20s")
    assert result.returncode == 0, result.stderr
    assert 'pod "sim-del" deleted' in result.stdout


def test_none_kubelet_leaves_pods_pending():
    with LocalCluster(kubelet="none") as c:
        assert c.node_names == []
        create_pod(c, "idle")
        pod = c.registry.get(PODS, "default", "idle")
        assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
        c.registry.delete(PODS, "default", "idle")  # no node: removed at once


def test_tls_cluster_works_with_kubectl_and_the_python_client():
    import kubernetes

    with LocalCluster(kubelet="simulated", tls=True) as c:
        assert c.url.startswith("https://")
        result = kubectl(c, "get", "nodes", "-o", "name")
        assert result.stdout.split() == ["node/localcluster-node-0"], result.stderr
        api = kubernetes.config.new_client_from_config(c.kubeconfig)
        try:
            nodes = kubernetes.client.CoreV1Api(api).list_node().items
        finally:
            api.close()
        assert [n.metadata.name for n in nodes] == ["localcluster-node-0"]
