"""Where the SDK, the ``tfjob`` command and the dashboard find their cluster.

Kubectl's order: an explicit kubeconfig path, else ``$KUBECONFIG`` (a ``:``-separated list),
else ``~/.kube/config`` when it exists, else the in-cluster service account (what the operator
uses in its pod). ``context`` picks a kubeconfig context; ``master`` overrides the server URL,
as the operator's ``--master`` does. Unlike the operator (whose v0.5.3 start-up lets
``$KUBECONFIG`` beat ``--kubeconfig``), an explicit path wins here, as it does for kubectl.

The connection is the project's own :class:`~tf_operator.k8s.client.KubeClient`; the default
namespace is the context's namespace, the pod's namespace in a cluster, else ``default``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from tf_operator.k8s.client.config import load_incluster, load_kubeconfig
from tf_operator.k8s.client.kube import KUBECONFIG_ENV, KubeClient
from tf_operator.version import __version__

log = logging.getLogger(__name__)

DEFAULT_NAMESPACE = "default"
DEFAULT_KUBECONFIG = Path("~/.kube/config")
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
USER_AGENT = f"tf-operator-sdk/{__version__}"


@dataclass(frozen=True)
class Connection:
    kube: KubeClient
    namespace: str


def kubeconfig_path(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The kubeconfig to load, by kubectl's order; None means in-cluster."""
    if explicit:
        return os.fspath(explicit)
    if os.environ.get(KUBECONFIG_ENV):
        return os.environ[KUBECONFIG_ENV]
    default = DEFAULT_KUBECONFIG.expanduser()
    return str(default) if default.exists() else None


def connect(
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    master: str | None = None,
    request_timeout: float | None = 60.0,
) -> Connection:
    """A client and default namespace from a kubeconfig or the in-cluster service account."""
    path = kubeconfig_path(kubeconfig)
    if path is not None:
        cfg = load_kubeconfig(path, context)
        namespace = cfg.namespace
        log.debug("using kubeconfig %s", path)
    else:
        cfg = load_incluster()
        namespace = _pod_namespace()
        log.debug("using in-cluster configuration")
    if master:
        cfg = cfg.with_host(master)
    kube = KubeClient(cfg, USER_AGENT, request_timeout)
    return Connection(kube, namespace or DEFAULT_NAMESPACE)


def _pod_namespace() -> str | None:
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or None
    except OSError:
        return None
