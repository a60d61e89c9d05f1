"""The client handle the operator passes around, and how it is configured.

:class:`KubeClient` holds one :class:`~.rest.RestTransport` (one pool of kept-alive
connections shared by every thread) and hands out a :class:`ResourceClient` per resource.
:func:`load_kube_client` follows tf-operator v0.5.3's start-up: the ``KUBECONFIG``
environment variable wins over the ``--kubeconfig`` flag, the ``--master`` URL overrides the
kubeconfig's server, and with neither the in-cluster service-account config is used
(client-go's ``BuildConfigFromFlags``). Configuration is loaded by :mod:`.config`, without
the official client's generated models.
"""

from __future__ import annotations

import logging
import os
import threading

from tf_operator.k8s.client.config import (
    ClientConfig,
    ConfigError,
    load_incluster,
    load_kubeconfig,
)
from tf_operator.k8s.client.resource import Resource
from tf_operator.k8s.client.rest import ResourceClient, RestTransport
from tf_operator.k8s.client.transport import HttpTransport

log = logging.getLogger(__name__)

KUBECONFIG_ENV = "KUBECONFIG"
# What the server sees when the caller names no client; the operator passes
# "tf-operator/<version>" (this package knows nothing of the operator's version).
DEFAULT_USER_AGENT = "tf-operator"


class KubeClient:
    """One API connection; ``resource(r)`` gives the client for resource ``r``."""

    def __init__(
        self,
        config: ClientConfig,
        user_agent: str = DEFAULT_USER_AGENT,
        request_timeout: float | None = 60.0,
    ) -> None:
        self.config = config
        self.user_agent = user_agent
        self.transport = RestTransport(HttpTransport(config, user_agent), request_timeout)
        self._clients: dict[Resource, ResourceClient] = {}
        self._lock = threading.Lock()

    def resource(self, resource: Resource) -> ResourceClient:
        rc = self._clients.get(resource)
        if rc is not None:
            return rc
        with self._lock:
            rc = self._clients.get(resource)
            if rc is None:
                rc = self._clients[resource] = ResourceClient(self.transport, resource)
            return rc

    @property
    def host(self) -> str:
        return self.transport.host

    def close(self) -> None:
        self.transport.http.close()


def build_configuration(kubeconfig: str | None = None, master: str | None = None) -> ClientConfig:
    """A :class:`ClientConfig` following client-go's BuildConfigFromFlags."""
    env = os.environ.get(KUBECONFIG_ENV)
    if env:
        kubeconfig = env
    if kubeconfig:
        cfg = load_kubeconfig(kubeconfig)
        log.info("using kubeconfig %s", kubeconfig)
    elif master:
        cfg = ClientConfig(host=master)
    else:
        try:
            cfg = load_incluster()
            log.info("using in-cluster configuration")
        except ConfigError:
            log.warning("neither --kubeconfig nor --master was given and in-cluster config failed")
            raise
    return cfg.with_host(master) if master else cfg


def load_kube_client(
    kubeconfig: str | None = None,
    master: str | None = None,
    request_timeout: float | None = 60.0,
    user_agent: str = DEFAULT_USER_AGENT,
) -> KubeClient:
    """A :class:`KubeClient` from a kubeconfig / master URL / in-cluster config."""
    return KubeClient(build_configuration(kubeconfig, master), user_agent, request_timeout)
