"""Controllers that keep one object in every namespace: the ``default`` ServiceAccount and the
``kube-root-ca.crt`` ConfigMap.

kube-controller-manager's serviceaccount controller creates ``default`` in each active
namespace (and again if it is deleted); its root-ca-cert-publisher does the same for
``kube-root-ca.crt`` holding the API server's CA, and puts the CA back if someone edits it.
``PerNamespaceObject`` is both: it watches namespaces and objects of that name, and for each
active namespace creates the object when missing or restores the parts it owns when changed.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable
from typing import Any

from localcluster.apimachinery.gvr import GVR
from localcluster.client.api import ClusterClient
from localcluster.client.informer import NAMESPACES, Informer, start_informers
from localcluster.client.keyqueue import KeyQueue, run_worker

logger = logging.getLogger(__name__)

SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")
CONFIGMAPS = ("", "v1", "configmaps")
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)


class PerNamespaceObject:
    """Ensures ``name`` of ``gvr`` exists in every active namespace with the fields ``owned``."""

    def __init__(
        self,
        client: ClusterClient,
        gvr: GVR,
        name: str,
        owned: Callable[[], dict[str, Any]],
        label: str,
    ) -> None:
        self._client = client
        self._gvr = gvr
        self._name = name
        self._owned = owned
        self._label = label
        self._queue = KeyQueue()
        self._namespaces = Informer(client, NAMESPACES, self._on_namespace)
        self._objects = Informer(
            client, gvr, self._on_object, field_selector=f"metadata.name={name}"
        )

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = start_informers((self._namespaces, self._objects), stop_event)
        threads.append(run_worker(self._queue, self.sync, stop_event, self._label))
        return threads

    def _on_namespace(
        self, event: str, namespace: dict[str, Any], _old: dict[str, Any] | None
    ) -> None:
        if event != "DELETED":
            self._queue.add(namespace["metadata"]["name"])

    def _on_object(self, _event: str, obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
        self._queue.add(obj["metadata"].get("namespace", ""))

    def wait_ready(self, timeout: float) -> bool:
        """True once every active namespace known so far has the object (start-up)."""
        stop = threading.Event()
        for _ in range(max(1, int(timeout / 0.02))):
            missing = [
                ns
                for ns in self._namespaces.items()
                if not ns["metadata"].get("deletionTimestamp")
                and self._objects.get(f"{ns['metadata']['name']}/{self._name}") is None
            ]
            if not missing:
                return True
            stop.wait(0.02)
        return False

    def sync(self, namespace: str) -> None:
        ns = self._namespaces.get(namespace)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return
        owned = self._owned()
        current = self._objects.get(f"{namespace}/{self._name}")
        if current is None:
            body = {"metadata": {"name": self._name, "namespace": namespace}}
            _merge(body, owned)
            try:
                self._client.create(self._gvr, namespace, body)
            except Exception as err:  # noqa: BLE001
                if getattr(err, "code", None) != 409:  # our informer lags: nothing to do
                    raise
            return
        if _contains(current, owned):
            return
        updated = copy.deepcopy(current)
        _merge(updated, owned)
        self._client.update(self._gvr, namespace, self._name, updated)


def _merge(target: dict[str, Any], owned: dict[str, Any]) -> None:
    for key, value in owned.items():
        if isinstance(value, dict):
            _merge(target.setdefault(key, {}), value)
        else:
            target[key] = value


def _contains(obj: dict[str, Any], owned: dict[str, Any]) -> bool:
    for key, value in owned.items():
        if isinstance(value, dict):
            if not isinstance(obj.get(key), dict) or not _contains(obj[key], value):
                return False
        elif obj.get(key) != value:
            return False
    return True


def default_service_accounts(client: ClusterClient) -> PerNamespaceObject:
    return PerNamespaceObject(
        client, SERVICE_ACCOUNTS, "default", dict, "serviceaccount-controller"
    )


def root_ca_publisher(client: ClusterClient, ca_file: str) -> PerNamespaceObject:
    def owned() -> dict[str, Any]:
        with open(ca_file) as handle:
            pem = handle.read()
        return {
            "metadata": {"annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
            "data": {"ca.crt": pem},
        }

    return PerNamespaceObject(
        client, CONFIGMAPS, "kube-root-ca.crt", owned, "root-ca-cert-publisher"
    )
