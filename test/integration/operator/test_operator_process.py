"""The tf-operator process itself: startup checks, probes, metrics, JSON logs, shutdown."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from localcluster.testing import BACKENDS

pytestmark = pytest.mark.integration

OPERATOR_BIN = Path(sys.executable).parent / "tf-operator"
V053_METRICS = (
    "tf_operator_jobs_created",
    "tf_operator_jobs_deleted",
    "tf_operator_jobs_successful",
    "tf_operator_jobs_failed",
    "tf_operator_jobs_restarted",
    "tf_operator_is_leader",
)


def test_version_flag():
    out = subprocess.run(
        [str(OPERATOR_BIN), "--version"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0
    assert out.stdout.splitlines()[0] == "API Version: v1"


@pytest.mark.parametrize("control_plane", BACKENDS)
def test_exits_1_when_crd_missing(tmp_path, control_plane):
    from localcluster.cluster import LocalCluster

    with LocalCluster(control_plane=control_plane, kubelet="none") as cluster:
        out = subprocess.run(
            [
                str(OPERATOR_BIN),
                f"--kubeconfig={cluster.kubeconfig}",
                "--monitoring-port=0",
                "--monitoring-address=127.0.0.1",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert out.returncode == 1
    assert "CRD doesn't exist" in out.stdout + out.stderr


def test_probes_metrics_and_json_logs(sim, operators):
    op = operators(sim)
    assert op.http("/healthz") == (200, "ok")
    sim.wait_for(lambda: op.http("/readyz")[0] == 200, 20, "readiness")
    sim.wait_for(op.is_leader, 20, "leadership")
    _, body = op.http("/metrics")
    for name in V053_METRICS:
        assert f"\n{name} " in body, name
    assert "promhttp_metric_handler_requests_total" in body
    lines = op.json_logs()
    assert lines, op.text()
    for entry in lines:
        assert {"level", "msg", "time", "filename"} <= entry.keys()
    assert any(e["msg"].startswith("Setting up client for monitoring on port") for e in lines)


def test_text_logs_when_json_disabled(sim, operators):
    op = operators(sim, "--json-log-format=false", "--no-leader-elect")
    op.wait_log(r'level=info msg="Using cluster scoped operator"')
    assert not op.json_logs()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_drains_releases_lock_and_exits_0(sim, operators, sig):
    op = operators(sim, "--leader-elect-resource-lock=leases")
    sim.wait_for(op.is_leader, 20, "leadership")
    op.wait_log("Started workers", 20)
    begin = time.monotonic()
    op.signal(sig)
    assert op.wait_exit(10) == 0
    assert time.monotonic() - begin < 5
    lease = sim.client.get(("coordination.k8s.io", "v1", "leases"), "default", "tf-operator")
    assert not lease["spec"].get("holderIdentity")
    messages = [e["msg"] for e in op.json_logs()]
    assert any("released" in m for m in messages)
    assert "Shutting down workers" in messages


def test_lock_namespace_from_kubeflow_namespace(sim, operators):
    sim.client.create(("", "v1", "namespaces"), None, {"metadata": {"name": "kubeflow"}})
    op = operators(sim, env={"KUBEFLOW_NAMESPACE": "kubeflow"})
    sim.wait_for(op.is_leader, 20, "leadership")
    ep = sim.client.get(("", "v1", "endpoints"), "kubeflow", "tf-operator")
    record = json.loads(ep["metadata"]["annotations"]["control-plane.alpha.kubernetes.io/leader"])
    assert record["holderIdentity"]


def test_namespace_flag_scopes_the_operator(sim, operators):
    for ns in ("team-a", "team-b"):
        sim.client.create(("", "v1", "namespaces"), None, {"metadata": {"name": ns}})
        sim.create(sim.job(f"job-{ns}", {"Worker": {}}), namespace=ns)
    op = operators(sim, "--namespace=team-a", "--no-leader-elect")
    op.wait_log("Scoping operator to namespace team-a")
    sim.wait_for(lambda: sim.pods("job-team-a", namespace="team-a"), 30, "pods in team-a")
    op.wait_log(r'Finished syncing tfjob \\"team-a/job-team-a', 10)
    assert sim.pods("job-team-b", namespace="team-b") == []
    assert "job-team-b" not in op.text()


def test_kubeconfig_env_wins_over_flag(sim, tmp_path):
    op = subprocess.Popen(
        [
            str(OPERATOR_BIN),
            f"--kubeconfig={tmp_path / 'missing'}",
            "--monitoring-port=0",
            "--monitoring-address=127.0.0.1",
            "--no-leader-elect",
        ],
        env={**os.environ, "KUBECONFIG": sim.kubeconfig},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        for line in op.stdout:
            if "Starting TFJob controller" in line:
                break
        else:
            pytest.fail("operator exited before starting the controller")
    finally:
        op.send_signal(signal.SIGTERM)
        assert op.wait(10) == 0
