"""Kubeconfig documents that point kubectl and the Python clients at the emulator.

One cluster, one user and one context. The user carries the bearer token when there is one;
the cluster trusts the server's self-signed CA when given its file, and skips verification for
an HTTPS URL without one. ``LocalCluster`` writes one for the whole cluster; tests of the bare
server build one with ``server.kubeconfig``.
"""

from __future__ import annotations

import os
from typing import Any

import yaml

CONTEXT_NAME = "localcluster"


def kubeconfig_document(
    url: str,
    token: str | None,
    ca_file: str | None = None,
    namespace: str = "default",
    context: str = CONTEXT_NAME,
) -> dict[str, Any]:
    """A kubeconfig (a dict for ``yaml.safe_dump``) with one cluster, user and context."""
    cluster: dict[str, Any] = {"server": url}
    if ca_file:
        cluster["certificate-authority"] = ca_file
    elif url.startswith("https:"):
        cluster["insecure-skip-tls-verify"] = True
    user = f"{context}-admin"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token} if token else {}}],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": context, "user": user, "namespace": namespace},
            }
        ],
        "current-context": context,
    }


def write_kubeconfig(path: str, url: str, token: str, ca_file: str | None = None) -> str:
    """Write a kubeconfig (mode 0600) for the cluster at ``url``; returns the absolute path."""
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        yaml.safe_dump(kubeconfig_document(url, token, ca_file), handle, sort_keys=False)
    return path
