"""`make demo ARGS=--pytorch` end to end: the replicas of a PyTorchJob meet through the
environment the operator injects, all-reduce their gradients, the loss falls and the job
Succeeds; no PyTorch is needed (or pulled) for it. The demo runs on both control planes
(``LOCALCLUSTER_CONTROL_PLANE=real``, as ``make demo ARGS="--pytorch --real"`` sets it)."""

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from localcluster.testing import BACKENDS

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "hack/demo.py"


@pytest.mark.parametrize("control_plane", BACKENDS)
def test_pytorch_demo_trains_to_success(control_plane):
    out = subprocess.run(
        [sys.executable, str(DEMO), "--pytorch"],
        capture_output=True,
        text=True,
        timeout=170,
        cwd=ROOT,
        env={**os.environ, "LOCALCLUSTER_CONTROL_PLANE": control_plane},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rendezvous: 3 ranks at pytorch-dist-training-master-0:23456" in out.stdout
    losses = [
        float(line.rsplit("loss ", 1)[1]) for line in out.stdout.splitlines() if "| step " in line
    ]
    assert len(losses) >= 2 and losses[-1] < losses[0] / 10
    assert "Succeeded   True   PyTorchJobSucceeded" in out.stdout
    assert "Worker      succeeded=2" in out.stdout
    assert "demo took" in out.stdout


def test_the_demo_runs_without_pytorch():
    """The example is plain Python: the demo's venv needs no torch, and the program imports none."""
    program = (ROOT / "examples/pytorch/local-dist-training/dist_train.py").read_text()
    assert "import torch" not in program
    requirements = []
    for project in ("pyproject.toml", "hack/pyproject.toml", "localcluster/pyproject.toml"):
        table = tomllib.loads((ROOT / project).read_text())["project"]
        requirements += table.get("dependencies", [])
        requirements += [
            r for extra in table.get("optional-dependencies", {}).values() for r in extra
        ]
    names = {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}
    assert not names & {"torch", "pytorch"}, names
    assert importlib.util.find_spec("demokit.pytorchjob") is not None
