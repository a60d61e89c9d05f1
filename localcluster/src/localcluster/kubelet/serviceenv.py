"""The ``KUBERNETES_SERVICE_*`` / ``KUBERNETES_PORT*`` variables every container gets.

A kubelet points them at the ``kubernetes`` Service's ClusterIP and port; with no kube-proxy
here a ClusterIP is unreachable, so they name the Service's endpoint (the API server's secure
listener) instead: that is where in-cluster client configuration must connect.
"""

from __future__ import annotations

from localcluster.client.api import ClusterClient

ENDPOINTS = ("", "v1", "endpoints")


def kubernetes_service_env(client: ClusterClient) -> dict[str, str]:
    """The variables for the API server's endpoint; empty when there is no secure listener."""
    try:
        endpoints = client.get(ENDPOINTS, "default", "kubernetes")
    except Exception:  # noqa: BLE001 - no kubernetes service: nothing to point at
        return {}
    for subset in endpoints.get("subsets") or []:
        addresses = subset.get("addresses") or []
        ports = [p for p in subset.get("ports") or [] if p.get("name") == "https"]
        if addresses and ports:
            host, port = addresses[0]["ip"], ports[0]["port"]
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
    return {}
