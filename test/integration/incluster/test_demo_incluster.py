"""``make demo ARGS=--in-cluster``: the demo with the operator deployed from the manifests,
its pod listed next to the job's pods, on either control plane (``--real``)."""

import re
import subprocess
import sys

import pytest

from .conftest import ROOT, needs_mount_namespaces

pytestmark = [pytest.mark.integration, needs_mount_namespaces]


def test_in_cluster_demo(control_plane):
    real = ["--real"] if control_plane == "real" else []
    out = subprocess.run(
        [sys.executable, str(ROOT / "hack/demo.py"), *real, "--in-cluster"],
        capture_output=True,
        text=True,
        timeout=170,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'deployment "tf-job-operator" successfully rolled out' in out.stdout
    tables = out.stdout.split("the operator's pod and the job's pods:")[1:]
    assert any(
        re.search(r"^kubeflow +tf-job-operator-\w+-\w+ +1/1 +Running", t, re.M)
        and re.search(r"^default +local-dist-training-chief-0 ", t, re.M)
        for t in tables
    )
    assert re.search(r"local-dist-training +Succeeded", out.stdout)
    assert "demo succeeded" in out.stdout
