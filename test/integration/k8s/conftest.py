"""Fixtures shared by the client-go tests that talk to an API server over HTTP.

``control_plane`` starts one API server per test module on each control plane (ids
``emulated`` and ``real``: the API-server emulator alone, or etcd with Kubernetes' own servers
and no nodes); ``apiserver_kube`` yields a real HTTP ``KubeClient`` for it; ``poll_until``
waits on a condition (there are no watch hooks to block on from outside). Tests that share a
module's server give their objects a namespace of their own (``ControlPlane.namespace``).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from localcluster.testing import BACKENDS, wait_for
from tf_operator.k8s.client import KubeClient, load_kube_client

NAMESPACES = ("", "v1", "namespaces")
SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")

_namespaces = itertools.count()


def _poll_until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        pause.wait(0.01)


@pytest.fixture
def poll_until() -> Callable[..., None]:
    """``poll_until(predicate, timeout=10.0)``: fail the test unless ``predicate()`` holds in time."""
    return _poll_until


class ControlPlane:
    """An API server of either control plane: ``kube()`` makes a client-go ``KubeClient`` for
    it, ``api`` (``create/get/list/...`` as ``localcluster.client`` takes them) sets the scene,
    ``server`` is the emulator (``None`` on the real control plane)."""

    def __init__(self, name: str, api: Any, server: Any = None, kubeconfig: str = "") -> None:
        self.name = name
        self.api = api
        self.server = server
        self.kubeconfig = kubeconfig

    def kube(self, **kwargs: Any) -> KubeClient:
        if self.server is not None:
            return load_kube_client(master=self.server.url, **kwargs)
        return load_kube_client(kubeconfig=self.kubeconfig, **kwargs)

    def namespace(self, prefix: str = "t") -> str:
        """A new namespace, ready for pods: on the real control plane the ServiceAccount
        admission refuses a pod until kube-controller-manager made the namespace's default
        ServiceAccount."""
        name = f"{prefix}-{next(_namespaces)}"
        self.api.create(NAMESPACES, None, {"metadata": {"name": name}})
        if self.server is None:
            wait_for(
                lambda: self.api.get(SERVICE_ACCOUNTS, name, "default"),
                timeout=30,
                what=f"the default ServiceAccount of {name}",
            )
        return name

    def install_crd(self, crd: dict[str, Any]) -> None:
        """Create ``crd`` and wait until it is served (kube-apiserver serves a new CRD a moment
        after it stores it)."""
        self.api.create(CRDS, None, crd)
        spec = crd["spec"]
        version = next(v["name"] for v in spec["versions"] if v.get("storage"))
        gvr = (spec["group"], version, spec["names"]["plural"])
        discover = getattr(self.api, "resource_info", None)
        if discover is not None:
            wait_for(lambda: discover(gvr), timeout=60, what=f"{gvr[2]} to be served")


def start_control_plane(backend: str, **emulator: Any) -> Iterator[ControlPlane]:
    """Yield a started :class:`ControlPlane` (``emulator``: the emulator's ``APIServer``
    arguments), stopped afterwards."""
    if backend == "real":
        from localcluster.cluster import LocalCluster

        with LocalCluster(control_plane="real", kubelet="none") as cluster:
            yield ControlPlane(backend, cluster.client, kubeconfig=cluster.kubeconfig)
        return
    from localcluster.controlplane.emulated import APIServer

    server = APIServer(host="127.0.0.1", port=0, **emulator)
    server.start()
    try:
        yield ControlPlane(backend, server.registry, server=server)
    finally:
        server.stop()


@pytest.fixture(scope="module", params=BACKENDS)
def control_plane(request) -> Iterator[ControlPlane]:
    """One API server per test module and control plane."""
    yield from start_control_plane(request.param)


@pytest.fixture(scope="module")
def apiserver_kube(control_plane) -> Iterator[KubeClient]:
    """An HTTP client for the module's API server."""
    client = control_plane.kube()
    yield client
    client.close()
