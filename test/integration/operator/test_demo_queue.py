"""`make demo ARGS=--queue`, through hack/demo.py's dispatch, as a user runs it: a job Kueue
queues suspended, admits on the spot pool, evicts while it runs, and admits again on the
on-demand pool, where it succeeds."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


def test_queue_demo_admits_evicts_and_completes():
    out = subprocess.run(
        [sys.executable, str(ROOT / "hack/demo.py"), "--queue"],
        capture_output=True,
        text=True,
        timeout=170,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    steps = [
        "Suspended=True (TFJobSuspended)",
        "the operator created nothing: 0 pods",
        "Kueue made the Workload: pod sets ps x1, worker x2",
        "Kueue admits mnist on flavour spot",
        "pod mnist-worker-1 -> spot-0",
        "Running=True (TFJobRunning)",
        "Kueue evicts mnist: suspend true",
        "pod mnist-worker-1 deleted",
        "nothing active, not failed: Kueue releases its quota",
        "Kueue admits mnist on flavour on-demand",
        "pod mnist-worker-1 -> on-demand-0",
        "Succeeded=True (TFJobSucceeded)",
        "Kueue: finished, success",
    ]
    found = [out.stdout.find(step) for step in steps]
    assert -1 not in found and found == sorted(found), out.stdout  # all there, in this order
    assert re.search(r"^  Failed ", out.stdout, re.M) is None
    assert "job Succeeded; demo took" in out.stdout
