"""Fixtures for the user tools (SDK, ``tfjob`` CLI, dashboard, monitoring kit).

One local cluster with the process kubelet (containers are local processes, so logs are real)
and the CRDs of every kind (TFJob, PyTorchJob, XGBoostJob, JAXJob, PaddleJob), and one real
``tf-operator`` process running every kind against it, shared by every test of this directory
in one pytest worker, once on each control plane (ids ``emulated`` and ``real``: the API-server
emulator, and etcd with Kubernetes' own servers, where pod logs come through kube-apiserver
from the kubelets' HTTPS server). Tests create their jobs with unique names, so they do not
depend on each other's leftovers.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.cluster import LocalCluster
from localcluster.testing import BACKENDS, wait_for
from support.crd import (
    CRD_FILE,
    JAX_CRD_FILE,
    PADDLE_CRD_FILE,
    PYTORCH_CRD_FILE,
    XGBOOST_CRD_FILE,
    crd_objects,
)
from support.operator_process import OperatorProcess
from tf_operator.sdk import TFJobClient, tfjob

ROOT = Path(__file__).resolve().parents[3]

_names = itertools.count()


@pytest.fixture(scope="session", params=BACKENDS)
def cluster(request) -> Iterator[LocalCluster]:
    # Session-scoped: pytest runs one control plane's tests, then the other's, so a worker
    # holds one cluster at a time.
    crds = crd_objects(CRD_FILE, PYTORCH_CRD_FILE, XGBOOST_CRD_FILE, JAX_CRD_FILE, PADDLE_CRD_FILE)
    with LocalCluster(control_plane=request.param, kubelet="process", crds=crds) as c:
        yield c


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
            "--enable-scheme=xgboostjob",
            "--enable-scheme=jaxjob",
            "--enable-scheme=paddlejob",
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


def create_namespace(cluster: LocalCluster, name: str) -> str:
    """Create namespace ``name`` and wait for its default ServiceAccount (on the real control
    plane kube-controller-manager makes it a moment later, and admission refuses pods until
    then)."""
    cluster.client.create(("", "v1", "namespaces"), None, {"metadata": {"name": name}})
    wait_for(
        lambda: cluster.client.get(("", "v1", "serviceaccounts"), name, "default"),
        timeout=30,
        what=f"the default ServiceAccount of {name}",
    )
    return name
