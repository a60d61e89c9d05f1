"""The agents on either side of the client seam: kubelets, the scheduler and the endpoints
controller run a pod to completion the same way in process and over HTTP to the emulator's own
listener, and over HTTP every request they make is counted by the API server."""

from __future__ import annotations

import pytest

from localcluster import LocalCluster, SimulatedTiming
from localcluster.client.http import HttpClient
from localcluster.client.inprocess import InProcessClient
from localcluster.kubelet import EXIT_CODE, RUN_SECONDS
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
