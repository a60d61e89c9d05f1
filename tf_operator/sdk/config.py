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

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from tf_operator.k8s.client.kube import CONNECTION_POOL_MAXSIZE, KUBECONFIG_ENV, KubeClient
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
    cfg = k8s_client.Configuration()
    path = kubeconfig_path(kubeconfig)
    if path is not None:
        k8s_config.load_kube_config(config_file=path, context=context, client_configuration=cfg)
        namespace = _context_namespace(path, context)
        log.debug("using kubeconfig %s", path)
    else:
        k8s_config.load_incluster_config(client_configuration=cfg)
        namespace = _pod_namespace()
        log.debug("using in-cluster configuration")
    if master:
        cfg.host = master.rstrip("/")
    cfg.connection_pool_maxsize = CONNECTION_POOL_MAXSIZE
    api_client = k8s_client.ApiClient(configuration=cfg)
    api_client.user_agent = USER_AGENT
    return Connection(KubeClient(api_client, request_timeout), namespace or DEFAULT_NAMESPACE)


def _context_namespace(path: str, context: str | None) -> str | None:
    contexts, active = k8s_config.list_kube_config_contexts(config_file=path)
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
    return ((chosen or {}).get("context") or {}).get("namespace")


def _pod_namespace() -> str | None:
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or None
    except OSError:
        return None
