"""One emulated cluster and one real control plane per module, as harness ``Backend``s."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from integration.differential.harness import Backend, Step
from localcluster.cluster import LocalCluster
from localcluster.controlplane.real import RealControlPlane
from localcluster.testing import wait_for

CRD_FILE = Path(__file__).resolve().parents[3] / "manifests/base/crd.yaml"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def install_tfjob_crd(backend: Backend) -> None:
    crd = yaml.safe_load(CRD_FILE.read_text())
    created = backend.send(Step("POST", CRDS, crd))
    assert created.status == 201, created.body
    path = f"{CRDS}/{crd['metadata']['name']}"

    def established() -> bool:
        conditions = backend.send(Step("GET", path)).body.get("status", {}).get("conditions", [])
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    wait_for(established, 60, what=f"the TFJob CRD established on {backend.name}")
    # discovery and the new resource's handler can lag the condition by a moment
    wait_for(
        lambda: backend.send(Step("GET", "/apis/kubeflow.org/v1/tfjobs")).ok(),
        60,
        what=f"TFJobs served on {backend.name}",
    )


@pytest.fixture(scope="module")
def emulated() -> Iterator[Backend]:
    with LocalCluster(kubelet="none", tls=True) as cluster:
        server = cluster.server
        assert server is not None
        backend = Backend(
            "emulated",
            cluster.url,
            server.cert_file,
            {"admin": server.admin_token},
        )
        install_tfjob_crd(backend)
        yield backend


@pytest.fixture(scope="module")
def real() -> Iterator[Backend]:
    with RealControlPlane() as plane:
        backend = Backend(
            "real",
            plane.url,
            plane.ca_file,
            {"admin": plane.admin_token},
        )
        install_tfjob_crd(backend)
        yield backend


@pytest.fixture(scope="module")
def backends(real: Backend, emulated: Backend) -> tuple[Backend, Backend]:
    """(real, emulated): kube-apiserver is the reference."""
    return real, emulated
