"""The admission plugins that read storage, for objects being created: ServiceAccount, and
the refusal part of Priority.

Priority (on by default in kube-apiserver): a pod, or a ``scheduling.k8s.io`` PodGroup, naming
a ``priorityClassName`` that does not exist is forbidden ("no PriorityClass with name nosuch was
found"); the two system classes kube-apiserver always has are taken as existing. The rest of
that plugin (``spec.priority`` filled in from the class) is not played (divergence D192).

ServiceAccount, for pods being created.

As upstream's plugin does: a pod without ``serviceAccountName`` gets ``default``; the named
account must exist, else the create is forbidden (the ``default`` account is looked up a few
times first, since a controller creates it just after its namespace); unless
``automountServiceAccountToken`` is false on the pod (or, when the pod does not say, on the
account), every container without its own mount at
``/var/run/secrets/kubernetes.io/serviceaccount`` gets a read-only mount of a projected
``kube-api-access-xxxxx`` volume holding a bound token (``expirationSeconds: 3607``), the
cluster CA from the ``kube-root-ca.crt`` ConfigMap and the pod's namespace.
"""

from __future__ import annotations

import random
import string
import time
from collections.abc import Callable
from typing import Any

from localcluster.apimachinery import errors
from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.objects import meta
from localcluster.controlplane.emulated.registry import Registry
from localcluster.controlplane.emulated.resources import ResourceType

SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")
PRIORITY_CLASSES = ("scheduling.k8s.io", "v1", "priorityclasses")
# kube-apiserver creates these at start-up and keeps them (HighestUserDefinablePriority + ...)
SYSTEM_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
# the resources (group, plural) whose create the Priority plugin checks
PRIORITY_NAMERS = frozenset({("", "pods"), ("scheduling.k8s.io", "podgroups")})
NAMESPACES = ("", "v1", "namespaces")
DEFAULT_SERVICE_ACCOUNT = "default"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
VOLUME_PREFIX = "kube-api-access-"
TOKEN_EXPIRATION_SECONDS = 3607  # upstream's value: a 1 h token the server may extend
DEFAULT_LOOKUP_ATTEMPTS = 10


def token_volume_source() -> dict[str, Any]:
    return {
        "defaultMode": 0o644,
        "sources": [
            {
                "serviceAccountToken": {
                    "expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                    "path": "token",
                }
            },
            {
                "configMap": {
                    "name": ROOT_CA_CONFIGMAP,
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                }
            },
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
    }


def _suffix() -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=5))


class ServiceAccountAdmission:
    """Called with ``(resource type, namespace, object)`` before an object is created; mutates
    pods or raises 403. Pods in a namespace that does not exist are left for the registry's 404."""

    def __init__(
        self,
        registry: Registry,
        lookup_attempts: int = DEFAULT_LOOKUP_ATTEMPTS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._registry = registry
        self._attempts = lookup_attempts
        self._sleep = sleep

    def __call__(self, rt: ResourceType, namespace: str | None, pod: dict[str, Any]) -> None:
        spec = pod.get("spec")
        if rt.storage_key != ("", "pods") or not namespace or not isinstance(spec, dict):
            return
        try:
            self._registry.get_shared(NAMESPACES, None, namespace)
        except StatusError:
            return
        name = (
            spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
        )
        spec["serviceAccountName"] = spec["serviceAccount"] = name
        account = self._lookup(namespace, name)
        if account is None:
            raise errors.forbidden(
                "",
                "pods",
                meta(pod).get("name", ""),
                f"error looking up service account {namespace}/{name}: "
                f'serviceaccount "{name}" not found',
            )
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            automount = account.get("automountServiceAccountToken")
        if automount is not False:
            _mount_token(spec)

    def _lookup(self, namespace: str, name: str) -> dict[str, Any] | None:
        attempts = self._attempts if name == DEFAULT_SERVICE_ACCOUNT else 1
        for attempt in range(attempts):
            if attempt:
                self._sleep(random.uniform(0.1, 0.2))
            try:
                return self._registry.get_shared(SERVICE_ACCOUNTS, namespace, name)
            except StatusError as err:
                if err.code != 404:
                    raise
        return None


def _mount_token(spec: dict[str, Any]) -> None:
    volumes = spec.get("volumes") or []
    existing = next(
        (
            v["name"]
            for v in volumes
            if isinstance(v, dict) and str(v.get("name", "")).startswith(VOLUME_PREFIX)
        ),
        None,
    )
    volume_name = existing or VOLUME_PREFIX + _suffix()
    needed = False
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        if not isinstance(container, dict):
            continue
        mounts = container.setdefault("volumeMounts", [])
        if any(isinstance(m, dict) and m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
            continue
        mounts.append({"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH})
        needed = True
    if needed and existing is None:
        spec["volumes"] = [*volumes, {"name": volume_name, "projected": token_volume_source()}]


class PriorityClassAdmission:
    """The Priority plugin's refusal: called with ``(resource type, namespace, object)``
    before an object is created; raises 403 when a pod or a ``scheduling.k8s.io`` PodGroup
    names a PriorityClass that does not exist, worded as kube-apiserver words it."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def __call__(self, rt: ResourceType, namespace: str | None, obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if rt.storage_key not in PRIORITY_NAMERS or not isinstance(spec, dict):
            return
        name = spec.get("priorityClassName")
        if not isinstance(name, str) or not name or name in SYSTEM_PRIORITY_CLASSES:
            return
        try:
            self._registry.get_shared(PRIORITY_CLASSES, None, name)
        except StatusError as err:
            if err.code != 404:
                raise
            group, plural = rt.storage_key
            why = f"no PriorityClass with name {name} was found"
            raise errors.forbidden(group, plural, meta(obj).get("name", ""), why) from None
