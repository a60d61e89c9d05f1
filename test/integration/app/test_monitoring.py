"""The monitoring endpoint: /metrics, health and readiness checks."""

import urllib.error
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, Gauge

from tf_operator.app.monitoring import MonitoringServer


def _get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.fixture
def monitor():
    registry = CollectorRegistry()
    Gauge("tf_operator_is_leader", "Is this client the leader?", registry=registry).set(1)
    state = {"ready": False}
    server = MonitoringServer(0, "127.0.0.1", registry=registry, ready=lambda: state["ready"])
    server.start()
    yield server, state
    server.stop()


@pytest.mark.integration
def test_metrics_health_and_readiness(monitor):
    server, state = monitor
    status, body = _get(server.port, "/metrics")
    assert status == 200
    assert "tf_operator_is_leader 1.0" in body
    assert _get(server.port, "/healthz") == (200, "ok")
    assert _get(server.port, "/readyz")[0] == 503
    state["ready"] = True
    assert _get(server.port, "/readyz") == (200, "ok")
    assert _get(server.port, "/nope")[0] == 404


@pytest.mark.integration
def test_failing_ready_check_reports_not_ready(monitor):
    server, _ = monitor

    def boom():
        raise RuntimeError("x")

    server.set_ready_check(boom)
    assert _get(server.port, "/readyz")[0] == 503
    assert _get(server.port, "/healthz")[0] == 200
