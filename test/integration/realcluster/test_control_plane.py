"""The real control plane built from Kubernetes' Go modules: starts, serves, and leaves nothing.

The binaries are built on first need (``make test`` builds them before pytest starts).
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import psutil
import pytest
import yaml

from localcluster.controlplane.real import RealControlPlane, pinned_versions
from localcluster.testing import wait_for

ROOT = Path(__file__).resolve().parents[3]
CRDS = (ROOT / "manifests/base/crd.yaml", ROOT / "manifests/components/pytorchjob/crd.yaml")


@pytest.fixture(scope="module")
def plane():
    with RealControlPlane() as started:
        yield started


def kubectl(plane: RealControlPlane, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", plane.kubeconfig, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(Path(plane.kubeconfig).parent)},
    )


def test_the_servers_report_the_pinned_version(plane):
    answer = kubectl(plane, "version", "-o", "yaml")
    assert answer.returncode == 0, answer.stderr
    assert yaml.safe_load(answer.stdout)["serverVersion"]["gitVersion"] == pinned_versions()[0]


def test_the_system_namespaces_exist_and_the_controllers_furnish_a_new_one(plane):
    """kube-apiserver made the namespaces; kube-controller-manager's controllers give a new
    namespace its ``default`` ServiceAccount and the cluster CA's ConfigMap."""
    answer = kubectl(plane, "get", "namespaces", "-o", "name")
    assert {"namespace/default", "namespace/kube-system", "namespace/kube-node-lease"} <= set(
        answer.stdout.split()
    )
    assert kubectl(plane, "create", "namespace", "furnished").returncode == 0
    wait_for(
        lambda: (
            kubectl(plane, "get", "sa/default", "cm/kube-root-ca.crt", "-n", "furnished").returncode
            == 0
        ),
        60,
        what="the new namespace's default ServiceAccount and kube-root-ca.crt",
    )


@pytest.mark.parametrize("crd", CRDS, ids=lambda p: p.parent.name)
def test_the_shipped_crds_are_accepted_and_established(plane, crd):
    applied = kubectl(plane, "apply", "--server-side", "-f", str(crd))
    assert applied.returncode == 0, applied.stderr
    name = yaml.safe_load(crd.read_text())["metadata"]["name"]
    waited = kubectl(plane, "wait", "--for=condition=Established", "--timeout=60s", f"crd/{name}")
    assert waited.returncode == 0, waited.stderr


def test_every_process_listens_on_loopback_only(plane):
    addresses = set()
    for pid in plane.pids():
        for connection in psutil.Process(pid).net_connections(kind="inet"):
            if connection.status == psutil.CONN_LISTEN:
                addresses.add(connection.laddr.ip)
    assert addresses == {"127.0.0.1"}


def test_stop_leaves_no_process_port_or_file():
    plane = RealControlPlane().start()
    pids, root = plane.pids(), Path(plane.kubeconfig).parent
    port = int(plane.url.rsplit(":", 1)[1])
    assert len(pids) == 4 and root.is_dir()
    plane.stop()
    assert not [pid for pid in pids if psutil.pid_exists(pid) and _alive(pid)]
    assert not root.exists()
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", port))


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
