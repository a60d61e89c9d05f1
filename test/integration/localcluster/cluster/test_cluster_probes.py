"""Probes on the process kubelet: readiness gates the Ready condition, a failing liveness
probe restarts the container, tcpSocket and exec probes, named ports."""

import sys

import pytest

from localcluster.cluster import SimulatedTiming
from localcluster.testing import cluster_fixture, wait_for

pytestmark = pytest.mark.integration

PODS = ("", "v1", "pods")
EVENTS = ("", "v1", "events")

# serves 503 on /ready until /tmp-like flag file exists, 200 after; binds the wildcard address
SERVER = r"""
import http.server, os, sys
flag = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code = 200 if os.path.exists(flag) else 503
        self.send_response(code); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("0.0.0.0", 8080), H).serve_forever()
"""


cluster = cluster_fixture(kubelet="process", simulated=SimulatedTiming(restart_delay=0.2))


def ready(cluster, name):
    conditions = cluster.registry.get(PODS, "default", name)["status"].get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def events(cluster, name):
    items, _ = cluster.registry.list(
        EVENTS, "default", field_selector=f"involvedObject.name={name}"
    )
    return [(e["reason"], e["message"]) for e in items]


def test_readiness_probe_gates_ready(cluster, tmp_path):
    flag = tmp_path / "ready"
    probe = {
        "httpGet": {"path": "/ready", "port": "http"},
        "periodSeconds": 1,
        "failureThreshold": 1,
    }
    container = {
        "name": "web",
        "image": "x",
        "command": [sys.executable, "-c", SERVER, str(flag)],
        "ports": [{"name": "http", "containerPort": 8080}],
        "readinessProbe": probe,
    }
    cluster.registry.create(
        PODS, "default", {"metadata": {"name": "web"}, "spec": {"containers": [container]}}
    )
    failed = ("Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503")
    wait_for(lambda: failed in events(cluster, "web"), 30)
    pod = cluster.registry.get(PODS, "default", "web")
    assert pod["status"]["phase"] == "Running" and not ready(cluster, "web")
    assert pod["status"]["containerStatuses"][0]["ready"] is False
    flag.write_text("ok")
    wait_for(lambda: ready(cluster, "web"), 30)


def test_failing_liveness_probe_restarts_the_container(cluster):
    probe = {"exec": {"command": ["false"]}, "periodSeconds": 1, "failureThreshold": 2}
    container = {"name": "c", "image": "x", "command": ["sleep", "3600"], "livenessProbe": probe}
    spec = {"containers": [container], "terminationGracePeriodSeconds": 1}
    cluster.registry.create(PODS, "default", {"metadata": {"name": "sick"}, "spec": spec})
    wait_for(
        lambda: (
            cluster.registry.get(PODS, "default", "sick")["status"]["containerStatuses"][0][
                "restartCount"
            ]
            >= 1
        ),
        60,
    )
    assert ("Killing", "Container c failed liveness probe, will be restarted") in events(
        cluster, "sick"
    )
    assert any(
        m.startswith("Liveness probe failed")
        for r, m in events(cluster, "sick")
        if r == "Unhealthy"
    )


def test_passing_liveness_probe_keeps_the_container(cluster, tmp_path):
    server = SERVER.replace(
        "def log_message(self, *a): pass", "def log_message(self, *a): print(self.path, flush=True)"
    )
    probe = {"httpGet": {"path": "/live", "port": 8082}, "periodSeconds": 1}
    flag = tmp_path / "up"
    flag.write_text("ok")
    container = {
        "name": "c",
        "image": "x",
        "command": [sys.executable, "-c", server.replace("8080", "8082"), str(flag)],
        "livenessProbe": probe,
    }
    cluster.registry.create(
        PODS, "default", {"metadata": {"name": "fine"}, "spec": {"containers": [container]}}
    )
    logs = lambda: b"".join(cluster._logs("default", "fine", "c")).decode()  # noqa: E731
    wait_for(lambda: logs().count("/live") >= 3, 30)  # three passing probes
    status = cluster.registry.get(PODS, "default", "fine")["status"]["containerStatuses"][0]
    assert status["restartCount"] == 0 and "running" in status["state"]
    assert "Killing" not in [r for r, _ in events(cluster, "fine")]


def test_tcp_readiness_and_exec_startup(cluster, tmp_path):
    container = {
        "name": "c",
        "image": "x",
        "command": [sys.executable, "-c", SERVER.replace("8080", "8081"), str(tmp_path / "f")],
        "startupProbe": {"exec": {"command": ["true"]}, "periodSeconds": 1},
        "readinessProbe": {"tcpSocket": {"port": 8081}, "periodSeconds": 1},
    }
    cluster.registry.create(
        PODS, "default", {"metadata": {"name": "tcp"}, "spec": {"containers": [container]}}
    )
    wait_for(lambda: ready(cluster, "tcp"), 30)
    assert (
        cluster.registry.get(PODS, "default", "tcp")["status"]["containerStatuses"][0]["started"]
        is True
    )
