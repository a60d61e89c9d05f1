"""Fixtures for the user tools (SDK, ``tfjob`` CLI, dashboard, monitoring kit).

One local cluster with the process kubelet (containers are local processes, so logs are real)
and the TFJob and PyTorchJob CRDs, and one real ``tf-operator`` process running both kinds
against it, shared by every test of this directory in one pytest worker, once on each control
plane (ids ``emulated`` and ``real``: the API-server emulator, and etcd with Kubernetes' own
servers). Tests create their jobs with unique names, so they do not depend on each other's
leftovers.

A test that reads pod logs asks for ``pod_logs``: on the real control plane a log request goes
through kube-apiserver to the kubelet's HTTPS server, and where our kubelets do not serve one
yet (their node reports no kubelet port) the test's ``real`` variant is skipped, saying so.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.cluster import LocalCluster
from localcluster.testing import BACKENDS, wait_for
from support.crd import CRD_FILE, PYTORCH_CRD_FILE, install_crds
from support.operator_process import OperatorProcess
from tf_operator.sdk import TFJobClient, tfjob

ROOT = Path(__file__).resolve().parents[3]

_names = itertools.count()


NODES = ("", "v1", "nodes")


@pytest.fixture(scope="session", params=BACKENDS)
def cluster(request) -> Iterator[LocalCluster]:
    # Session-scoped: pytest runs one control plane's tests, then the other's, so a worker
    # holds one cluster at a time.
    with LocalCluster(control_plane=request.param, kubelet="process") as c:
        install_crds(c.client, CRD_FILE, PYTORCH_CRD_FILE)
        yield c


def kubelets_serve_logs(cluster: LocalCluster) -> bool:
    """Whether a pod log request reaches the kubelets: always on the emulator (it reads them
    itself); through kube-apiserver only where every node reports its kubelet's port."""
    if cluster.control_plane != "real":
        return True
    nodes = cluster.client.list(NODES, None).items
    return bool(nodes) and all(
        ((n.get("status") or {}).get("daemonEndpoints") or {})
        .get("kubeletEndpoint", {})
        .get("Port")
        for n in nodes
    )


@pytest.fixture
def pod_logs(cluster) -> None:
    """Skip on a control plane that cannot reach the kubelets for pod logs (see above)."""
    if not kubelets_serve_logs(cluster):
        pytest.skip(
            "pod logs on the real control plane need the kubelet's HTTPS server, which "
            "our kubelets do not serve on this branch yet"
        )


@pytest.fixture(scope="session")
def operator(cluster, tmp_path_factory) -> Iterator[OperatorProcess]:
    log = tmp_path_factory.mktemp("operator") / "operator.log"
    op = OperatorProcess(
        cluster.kubeconfig,
        log,
        [
            "--json-log-format=false",
            "--threadiness=2",
            "--leader-elect=false",
            "--enable-scheme=tfjob",
            "--enable-scheme=pytorchjob",
        ],
    )
    try:
        wait_for(lambda: op.http("/readyz")[0] == 200, timeout=60, what="the operator's /readyz")
        yield op
    finally:
        op.stop()


@pytest.fixture
def client(cluster) -> Iterator[TFJobClient]:
    with TFJobClient(cluster.kubeconfig, namespace="default") as c:
        yield c


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_names)}"


def python_job(name: str, code: str, workers: int = 1, ps: int = 0, **kw) -> dict:
    """A TFJob whose containers run ``code`` in this interpreter (the process kubelet)."""
    return tfjob(name, command=[sys.executable, "-u", "-c", code], ps=ps, workers=workers, **kw)
