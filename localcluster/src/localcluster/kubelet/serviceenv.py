"""The ``KUBERNETES_SERVICE_*`` / ``KUBERNETES_PORT*`` variables every container gets.

A kubelet points them at the ``kubernetes`` Service's ClusterIP and port; with no kube-proxy
here a ClusterIP is unreachable, so they name the Service's endpoint (the API server's secure
listener) instead: that is where in-cluster client configuration must connect. The kubelet is
told that address (``InClusterAPI``) when it starts, as a real kubelet is configured, so the
same code serves the emulator and a real kube-apiserver; ``from_endpoints`` reads it from the
``default/kubernetes`` Endpoints every API server maintains. The pod's token and ``ca.crt``
come through the API (the TokenRequest API and the ``kube-root-ca.crt`` ConfigMap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class InClusterAPI:
    """The API server's address as in-cluster clients reach it."""

    host: str
    port: int


def from_endpoints(endpoints: dict[str, Any]) -> InClusterAPI | None:
    """The first address and ``https`` port of the ``default/kubernetes`` Endpoints."""
    for subset in endpoints.get("subsets") or []:
        addresses = subset.get("addresses") or []
        ports = [p for p in subset.get("ports") or [] if p.get("name") == "https"]
        if addresses and ports:
            return InClusterAPI(str(addresses[0]["ip"]), int(ports[0]["port"]))
    return None


def kubernetes_service_env(api: InClusterAPI | None) -> dict[str, str]:
    """The variables for the API server's address; empty when there is none."""
    if api is None:
        return {}
    host, port = api.host, api.port
    url = f"tcp://{host}:{port}"
    return {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": str(port),
        "KUBERNETES_SERVICE_PORT_HTTPS": str(port),
        "KUBERNETES_PORT": url,
        f"KUBERNETES_PORT_{port}_TCP": url,
        f"KUBERNETES_PORT_{port}_TCP_PROTO": "tcp",
        f"KUBERNETES_PORT_{port}_TCP_PORT": str(port),
        f"KUBERNETES_PORT_{port}_TCP_ADDR": host,
    }
