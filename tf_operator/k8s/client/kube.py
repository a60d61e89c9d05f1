"""The client handle the operator passes around, and how it is configured.

:class:`KubeClient` wraps one ``kubernetes.client.ApiClient`` (one connection
pool shared by every thread) and hands out a :class:`ResourceClient` per
resource. :func:`load_kube_client` follows tf-operator v0.5.3's start-up: the
``KUBECONFIG`` environment variable wins over the ``--kubeconfig`` flag, the
``--master`` URL overrides the kubeconfig's server, and with neither the
in-cluster service-account config is used (client-go's
``BuildConfigFromFlags``).
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from tf_operator.k8s.client.resource import Resource
from tf_operator.k8s.client.rest import ResourceClient, RestTransport

log = logging.getLogger(__name__)

KUBECONFIG_ENV = "KUBECONFIG"
# Informers, workers, the event broadcaster and leader election all share the
# one pool; urllib3's default of 1 connection per host would serialise them.
CONNECTION_POOL_MAXSIZE = 32
# What the server sees when the caller names no client; the operator passes
# "tf-operator/<version>" (this package knows nothing of the operator's version).
DEFAULT_USER_AGENT = "tf-operator"


class KubeClient:
    """One API connection; ``resource(r)`` gives the client for resource ``r``."""

    def __init__(self, api_client: Any, request_timeout: float | None = 60.0) -> None:
        self.api_client = api_client
        self.transport = RestTransport(api_client, request_timeout)
        self._clients: dict[Resource, ResourceClient] = {}
        self._lock = threading.Lock()

    def resource(self, resource: Resource) -> ResourceClient:
        with self._lock:
            rc = self._clients.get(resource)
            if rc is None:
                rc = self._clients[resource] = ResourceClient(self.transport, resource)
            return rc

    @property
    def host(self) -> str:
        return self.transport.host

    def close(self) -> None:
        self.api_client.close()


def build_configuration(kubeconfig: str | None = None, master: str | None = None) -> Any:
    """A ``kubernetes.client.Configuration`` following client-go's BuildConfigFromFlags."""
    env = os.environ.get(KUBECONFIG_ENV)
    if env:
        kubeconfig = env
    cfg = k8s_client.Configuration()
    if not kubeconfig and not master:
        try:
            k8s_config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
            log.info("using in-cluster configuration")
        except k8s_config.ConfigException:
            log.warning("neither --kubeconfig nor --master was given and in-cluster config failed")
            raise
    elif kubeconfig:
        k8s_config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)  # type: ignore[no-untyped-call]
        log.info("using kubeconfig %s", kubeconfig)
    if master:
        cfg.host = master.rstrip("/")
    cfg.connection_pool_maxsize = CONNECTION_POOL_MAXSIZE
    return cfg


def load_kube_client(
    kubeconfig: str | None = None,
    master: str | None = None,
    request_timeout: float | None = 60.0,
    user_agent: str = DEFAULT_USER_AGENT,
) -> KubeClient:
    """A :class:`KubeClient` from a kubeconfig / master URL / in-cluster config."""
    cfg = build_configuration(kubeconfig, master)
    api_client = k8s_client.ApiClient(configuration=cfg)
    api_client.user_agent = user_agent
    return KubeClient(api_client, request_timeout)
