"""Fixtures for the user tools (SDK, ``tfjob`` CLI, dashboard, monitoring kit).

One local cluster with the process kubelet (containers are local processes, so logs are real)
and the CRDs of every kind (TFJob, PyTorchJob, XGBoostJob, JAXJob, PaddleJob), and one real
``tf-operator`` process running every kind against it, shared by every test of this directory in one pytest worker. Tests create their jobs with unique names, so they do not
depend on each other's leftovers.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.cluster import LocalCluster
from localcluster.testing import wait_for
from support.crd import (
    CRD_FILE,
    JAX_CRD_FILE,
    PADDLE_CRD_FILE,
    PYTORCH_CRD_FILE,
    XGBOOST_CRD_FILE,
    install_crds,
)
from support.operator_process import OperatorProcess
from tf_operator.sdk import TFJobClient, tfjob

ROOT = Path(__file__).resolve().parents[3]

_names = itertools.count()


@pytest.fixture(scope="session")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(kubelet="process") as c:
        install_crds(
            c.registry, CRD_FILE, PYTORCH_CRD_FILE, XGBOOST_CRD_FILE, JAX_CRD_FILE, PADDLE_CRD_FILE
        )
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
