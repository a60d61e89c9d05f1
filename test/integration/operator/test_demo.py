"""`make demo` end to end: hack/demo.py with the example, the crash-once variant, and a
user-supplied failing job. The example runs on both control planes (on the real one as
``make demo ARGS=--real`` runs it, which builds the control plane if needed and sets
``LOCALCLUSTER_CONTROL_PLANE=real`` for the local cluster's command), and so does the
disruption variant, which drains a node through the cluster's eviction API; the other
variants, which exercise the operator rather than the cluster, on the emulated one (the real
control plane costs ~30 s a demo)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from localcluster.testing import BACKENDS

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "hack/demo.py"


def run_demo(*args: str, control_plane: str = "emulated") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "LOCALCLUSTER_CONTROL_PLANE"}
    real = ["--real"] if control_plane == "real" else []
    return subprocess.run(
        [sys.executable, str(DEMO), *args, *real],
        capture_output=True,
        text=True,
        timeout=170,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.parametrize("control_plane", BACKENDS)
def test_demo_succeeds_with_falling_loss(control_plane):
    out = run_demo(control_plane=control_plane)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Succeeded   True" in out.stdout
    losses = [
        float(line.rsplit("loss ", 1)[1].split()[0])
        for line in out.stdout.splitlines()
        if "chief: step" in line
    ]
    assert len(losses) >= 2 and losses[-1] < losses[0]
    assert "final step" in out.stdout
    assert "demo took" in out.stdout
    assert f"control plane: {control_plane}" in out.stdout


def test_demo_exitcode_variant_restarts_worker():
    out = run_demo("--exitcode")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "exited with code 137" in out.stdout
    assert "TFJobRestarting" in out.stdout


@pytest.mark.parametrize("control_plane", BACKENDS)
def test_demo_disruption_variant_drains_the_workers_node_without_spending_the_budget(
    control_plane,
):
    out = run_demo("--disruption", control_plane=control_plane)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    drained = next(line for line in lines if line.startswith("draining node "))
    node = drained.split()[2].rstrip(",")
    assert "where local-dist-training-worker-1 runs" in drained
    for step in (
        f"node/{node} cordoned",
        "evicting pod default/local-dist-training-worker-1",
        "pod/local-dist-training-worker-1 evicted",
        f"node/{node} drained",
    ):
        assert f"  {step}" in lines, out.stdout
    recreated = next(line for line in lines if "recreated by the operator" in line)
    assert recreated.startswith("local-dist-training-worker-1 ")
    assert not recreated.endswith(f"node {node}")  # on the other worker node
    assert "Succeeded   True" in out.stdout
    assert "restarts counted against backoffLimit: 0 of 0" in out.stdout


def test_demo_with_user_job_that_fails(tmp_path):
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "user-job", "namespace": "team-x"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "restartPolicy": "Never",
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "any",
                                    "command": [sys.executable, "-c", "raise SystemExit(3)"],
                                }
                            ]
                        }
                    },
                }
            }
        },
    }
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    out = run_demo("--tfjob", str(path))
    assert out.returncode == 1
    assert "Failed      True" in out.stdout
    assert "submitted TFJob user-job in namespace team-x" in out.stdout


def test_demo_tears_everything_down_when_interrupted():
    import signal

    import psutil

    demo = subprocess.Popen(
        [sys.executable, str(DEMO)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    descendants = []
    try:
        for line in demo.stdout:
            if "chief: step" in line:
                descendants = psutil.Process(demo.pid).children(recursive=True)
                break
        assert descendants, "the demo never showed training progress"
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(30) == 130
    finally:
        if demo.poll() is None:
            demo.kill()
    gone, alive = psutil.wait_procs(descendants, timeout=10)
    assert alive == []
    assert len(gone) >= 4  # at least cluster, operator, PS and chief
