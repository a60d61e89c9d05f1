"""The agents on either side of the client seam: kubelets, the scheduler and the endpoints
controller run a pod to completion the same way in process and over HTTP to the emulator's own
listener, and over HTTP every request they make is counted by the API server."""

from __future__ import annotations

import pytest

from localcluster import LocalCluster, SimulatedTiming
from localcluster.client.http import HttpClient
from localcluster.client.inprocess import InProcessClient
from localcluster.cluster import ExternalAPIServer
from localcluster.controlplane.emulated import APIServer
from localcluster.controlplane.emulated.serving.kubeconfig import write_kubeconfig
from localcluster.kubelet import EXIT_CODE, RUN_SECONDS
from localcluster.kubelet.dns import probe_mount_namespace
from localcluster.testing import wait_for

pytestmark = pytest.mark.integration

PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")
ENDPOINTS = ("", "v1", "endpoints")
NODES = ("", "v1", "nodes")
AGENTS = "localcluster-agents"


def agent_requests(cluster: LocalCluster) -> int:
    assert cluster.server is not None
    return sum(
        n for key, n in cluster.server.request_metrics.snapshot().items() if key[0] == AGENTS
    )


@pytest.mark.parametrize("over_http", [False, True], ids=["in-process", "http"])
def test_a_pod_is_scheduled_served_and_completed_through_the_client(over_http):
    timing = SimulatedTiming(start_delay=0.1, restart_delay=0.1)
    with LocalCluster(
        kubelet="simulated", nodes=2, simulated=timing, agents_over_http=over_http
    ) as cluster:
        client = cluster.client
        assert isinstance(client, HttpClient if over_http else InProcessClient)
        nodes = client.list(NODES).items
        assert sorted(n["metadata"]["name"] for n in nodes) == sorted(cluster.node_names)

        client.create(
            SERVICES,
            "default",
            {
                "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
            },
        )
        pod = {
            "metadata": {
                "name": "web-0",
                "labels": {"app": "web"},
                "annotations": {RUN_SECONDS: "1.5", EXIT_CODE: "0"},
            },
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]},
        }
        client.create(PODS, "default", pod)

        def running_ip() -> str | None:
            status = client.get(PODS, "default", "web-0")["status"]
            return status.get("podIP") if status.get("phase") == "Running" else None

        ip = wait_for(running_ip, 20, what="the pod running")
        bound = client.get(PODS, "default", "web-0")["spec"]["nodeName"]
        assert bound in cluster.node_names

        def served() -> bool:
            subsets = client.get(ENDPOINTS, "default", "web").get("subsets") or []
            return any(a["ip"] == ip for s in subsets for a in s.get("addresses") or [])

        wait_for(served, 20, what="the endpoints controller serving the pod's IP")

        def phase() -> str:
            return str(client.get(PODS, "default", "web-0")["status"].get("phase"))

        wait_for(lambda: phase() == "Succeeded", 20, what="the pod completed")
        reasons = {
            e["reason"]
            for e in client.list(("", "v1", "events"), "default").items
            if e["involvedObject"]["name"] == "web-0"
        }
        assert {"Scheduled", "Started"} <= reasons, reasons

        if over_http:
            assert agent_requests(cluster) > 0  # the agents really went through the listener
        else:
            assert agent_requests(cluster) == 0


@pytest.mark.parametrize("over_http", [False, True], ids=["in-process", "http"])
def test_kubelets_heartbeat_as_a_node_lifecycle_controller_expects(over_http):
    with LocalCluster(kubelet="simulated", nodes=1, agents_over_http=over_http) as cluster:
        client, kubelet = cluster.client, cluster.kubelets[0]
        name = kubelet.node.name
        lease = client.get(("coordination.k8s.io", "v1", "leases"), "kube-node-lease", name)
        assert lease["spec"]["holderIdentity"] == name
        assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"
        node = client.get(NODES, None, name)
        assert node["status"]["allocatable"]["pods"] == "110"
        # what the node lifecycle controller writes after missed heartbeats
        unknown = [
            {**c, "status": "Unknown", "reason": "NodeStatusUnknown"}
            for c in node["status"]["conditions"]
        ]
        client.patch(
            NODES,
            None,
            name,
            {"status": {"conditions": unknown}},
            "strategic",
            subresource="status",
        )
        kubelet.heartbeat()
        conditions = {
            c["type"]: c["status"] for c in client.get(NODES, None, name)["status"]["conditions"]
        }
        assert conditions == {
            "Ready": "True",
            "MemoryPressure": "False",
            "DiskPressure": "False",
            "PIDPressure": "False",
        }


def test_agents_attach_to_an_external_api_server(tmp_path):
    """What the real control plane gets: no emulator inside the cluster, the agents over HTTPS
    with the server's CA and a token, the kubelets' HTTPS server on by default, and only the
    controllers and schedulers asked for (a real control plane brings its own)."""
    outside = APIServer(tls=True)
    outside.start()
    try:
        assert outside.cert_file is not None
        kubeconfig = write_kubeconfig(
            str(tmp_path / "kubeconfig"), outside.url, outside.admin_token, outside.cert_file
        )
        from_file = HttpClient.from_kubeconfig(kubeconfig)
        assert from_file.list(NODES).items == []
        external = ExternalAPIServer(
            outside.url, kubeconfig, token=outside.admin_token, ca_file=outside.cert_file
        )
        timing = SimulatedTiming(start_delay=0.1)
        with LocalCluster(
            kubelet="simulated", api_server=external, scheduler=True, simulated=timing
        ) as cluster:
            assert cluster.server is None and cluster.url == outside.url
            assert cluster.kubeconfig == kubeconfig
            with pytest.raises(RuntimeError):
                _ = cluster.registry
            node = from_file.get(NODES, None, cluster.node_names[0])
            port = node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
            assert port == cluster.kubelet_port and port > 0
            pod = {
                "metadata": {"name": "p", "annotations": {RUN_SECONDS: "0.2"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]},
            }
            from_file.create(PODS, "default", pod)

            def phase() -> str:
                return str(from_file.get(PODS, "default", "p")["status"].get("phase"))

            wait_for(lambda: phase() == "Succeeded", 20, what="the pod run by the agents")
            # no endpoints controller, ReplicaSet controller... unless asked
            assert from_file.list(("", "v1", "serviceaccounts"), "default").items == []
        counted = outside.request_metrics.snapshot()
        assert sum(n for key, n in counted.items() if key[0] == AGENTS) > 0
    finally:
        outside.stop()


@pytest.mark.skipif(not probe_mount_namespace(), reason="needs mount namespaces (root)")
def test_process_pods_get_their_token_and_api_address_over_http():
    """The process kubelet over HTTP: the pod's projected token comes from the TokenRequest
    API through the client, KUBERNETES_SERVICE_* from the kubelet's configuration."""
    show = (
        "test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo token;"
        " echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"
    )
    with LocalCluster(kubelet="process", agents_over_http=True) as cluster:
        client = cluster.client
        assert isinstance(client, HttpClient)
        spec = {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "x", "command": ["sh", "-c", show]}],
        }
        client.create(PODS, "default", {"metadata": {"name": "incluster"}, "spec": spec})

        def phase() -> str:
            return str(client.get(PODS, "default", "incluster")["status"].get("phase"))

        wait_for(lambda: phase() in ("Succeeded", "Failed"), 60, what="the pod finished")
        log = client.request("GET", "/api/v1/namespaces/default/pods/incluster/log").data
        assert phase() == "Succeeded", log
        assert cluster.server is not None
        assert log.decode().split() == ["token", f"127.0.0.1:{cluster.server.secure_port}"]
