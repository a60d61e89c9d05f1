"""The tf-operator-localcluster command: ready line, kubectl works, clean SIGTERM exit."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap

import psutil
import pytest
import yaml

from localcluster.testing import wait_for

pytestmark = pytest.mark.integration


def run_kubectl(kubeconfig, home, *args):
    env = {"PATH": os.environ["PATH"], "HOME": home, "KUBECONFIG": kubeconfig}
    return subprocess.run(
        ["kubectl", *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_cli_serves_until_signalled_and_leaves_no_children(tmp_path, stop_signal):
    kubeconfig = str(tmp_path / "kc" / "config")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "localcluster",
            "--port", "0", "--kubeconfig", kubeconfig, "--nodes", "2",
            "--node-gpus", "1", "--node-labels", "team=ml,tier=gold", "--log-level", "warning",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        line = proc.stdout.readline()
        assert line.startswith("ready "), proc.stderr.read() if proc.poll() is not None else line
        _, url, written = line.split()
        assert written == kubeconfig and url.startswith("http://127.0.0.1:")
        with open(kubeconfig) as handle:
            config = yaml.safe_load(handle)
        assert config["current-context"] == config["contexts"][0]["name"]
        assert config["users"][0]["user"]["token"]
        assert config["clusters"][0]["cluster"]["server"] == url

        with tempfile.TemporaryDirectory() as home:
            nodes = run_kubectl(kubeconfig, home, "get", "nodes", "-l", "team=ml", "-o", "name")
            assert nodes.stdout.split() == ["node/localcluster-node-0", "node/localcluster-node-1"]
            gpus = run_kubectl(
                kubeconfig, home, "get", "node", "localcluster-node-0",
                "-o", "jsonpath={.status.allocatable.nvidia\\.com/gpu}",
            )  # fmt: skip
            assert gpus.stdout == "1"
            manifest = tmp_path / "pod.yaml"
            manifest.write_text(
                textwrap.dedent(
                    """\
                    apiVersion: v1
                    kind: Pod
                    metadata: {name: sleeper}
                    spec:
                      containers:
                      - name: main
                        image: busybox
                        command: [sh, -c, "echo started; exec sleep 600"]
                    """
                )
            )
            created = run_kubectl(kubeconfig, home, "create", "-f", str(manifest))
            assert created.returncode == 0, created.stderr
            wait_for(
                lambda: run_kubectl(kubeconfig, home, "logs", "sleeper").stdout == "started\n", 30
            )

        children = psutil.Process(proc.pid).children(recursive=True)
        assert any("sleep" in " ".join(c.cmdline()) for c in children)

        proc.send_signal(stop_signal)
        assert proc.wait(timeout=20) == 0
        assert proc.stdout.read() == ""  # exactly one line on stdout
        for child in children:
            assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_help_lists_the_flags():
    result = subprocess.run(
        [sys.executable, "-m", "localcluster", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for flag in (
        "--kubelet",
        "--nodes",
        "--node-gpus",
        "--watch-history",
        "--tls",
        "--sim-start-delay",
    ):
        assert flag in result.stdout


def test_open_cluster_on_a_public_address_needs_insecure(tmp_path):
    """Issue 13 item 7: no token on a non-loopback address is refused unless --insecure."""
    base = [sys.executable, "-m", "localcluster", "--kubelet", "none", "--host", "0.0.0.0",
            "--kubeconfig", str(tmp_path / "config"), "--log-level", "warning"]  # fmt: skip
    refused = subprocess.run(base, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "insecure" in refused.stderr
    proc = subprocess.Popen(
        [*base, "--insecure"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().startswith("ready http://0.0.0.0:")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
