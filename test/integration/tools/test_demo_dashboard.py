"""``make demo ARGS=--dashboard``: the dashboard starts beside the demo job and serves it."""

from __future__ import annotations

import subprocess
import sys
import urllib.request

import pytest

from localcluster.testing import wait_for
from test.integration.tools.conftest import ROOT


def fetch(url: str) -> str:
    """The page's HTML; raises (so ``wait_for`` retries) until the informer has the job."""
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


pytestmark = pytest.mark.integration


def test_demo_prints_a_dashboard_url_that_serves_the_job():
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "hack/demo.py"), "--dashboard"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    try:
        page = ""
        for line in proc.stdout:
            if line.startswith("dashboard: http://127.0.0.1:"):
                url = line.split()[1]
                page = wait_for(lambda: fetch(url), timeout=30, what="the job page")  # noqa: B023
                break
        rest = proc.stdout.read()
        assert proc.wait(120) == 0, rest
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)
    assert "<h1>local-dist-training</h1>" in page
    assert "job Succeeded; demo took" in rest
