"""Container environment and command line as the kubelet computes them.

Handles ``env`` (literal values with ``$(VAR)`` expansion, ``valueFrom``
fieldRef / resourceFieldRef / configMapKeyRef / secretKeyRef) and ``envFrom``,
plus ``$(VAR)`` expansion in ``command`` and ``args``. Lookups of ConfigMaps
and Secrets go to the API server. ``ContainerConfigError`` carries the message
the kubelet reports as ``CreateContainerConfigError``.
"""

from __future__ import annotations

import base64
import re
from typing import Any, cast

from localcluster.apimachinery.gvr import GVR
from localcluster.client.api import ClusterClient
from localcluster.kubelet.podstatus import PodRecord

CONFIGMAPS = ("", "v1", "configmaps")
SECRETS = ("", "v1", "secrets")
_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class ContainerConfigError(Exception):
    """The container's configuration cannot be resolved (missing ConfigMap key...)."""


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes ``$(VAR)`` expansion: unknown references stay, ``$$`` escapes."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env.get(name, match.group(0))

    return _REFERENCE.sub(replace, text)


def field_value(record: PodRecord, path: str) -> str:
    meta = record.pod.get("metadata") or {}
    spec = record.pod.get("spec") or {}
    simple = {
        "metadata.name": record.name,
        "metadata.namespace": record.namespace,
        "metadata.uid": record.uid,
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
        "status.podIP": record.pod_ip,
        "status.podIPs": record.pod_ip,
        "status.hostIP": record.host_ip,
        "status.hostIPs": record.host_ip,
    }
    if path in simple:
        return cast(str, simple[path])
    match = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if match:
        return cast(str, (meta.get(match.group(1)) or {}).get(match.group(2), ""))
    raise ContainerConfigError(f"unsupported fieldRef {path!r}")


def object_data(
    client: ClusterClient, gvr: GVR, namespace: str, name: str, optional: bool
) -> dict[str, str] | None:
    try:
        obj = client.get(gvr, namespace, name)
    except Exception as err:  # noqa: BLE001
        if optional:
            return None
        raise ContainerConfigError(f'{gvr[2][:-1]} "{name}" not found') from err
    if gvr == SECRETS:
        data = {k: base64.b64decode(v).decode() for k, v in (obj.get("data") or {}).items()}
        data.update(obj.get("stringData") or {})
        return data
    return dict(obj.get("data") or {})


def _key_ref(client: ClusterClient, gvr: GVR, namespace: str, ref: dict[str, Any]) -> str | None:
    data = object_data(client, gvr, namespace, ref.get("name", ""), bool(ref.get("optional")))
    if data is None:
        return None
    if ref.get("key") not in data:
        if ref.get("optional"):
            return None
        raise ContainerConfigError(
            f"couldn't find key {ref.get('key')} in {gvr[2][:-1]} {ref.get('name')}"
        )
    return data[ref["key"]]


def _resource_value(spec: dict[str, Any], ref: dict[str, Any]) -> str:
    resources = spec.get("resources") or {}
    kind, _, name = (ref.get("resource") or "").partition(".")
    return str((resources.get(kind) or {}).get(name, "0"))


def container_env(
    client: ClusterClient, record: PodRecord, spec: dict[str, Any], base: dict[str, str]
) -> dict[str, str]:
    """The full environment of one container, ``base`` first (lowest precedence)."""
    env = dict(base)
    for source in spec.get("envFrom") or []:
        env.update(_env_from(client, record.namespace, source))
    for item in spec.get("env") or []:
        name = item["name"]
        if "valueFrom" not in item:
            env[name] = expand(str(item.get("value", "")), env)
            continue
        value = _value_from(client, record, spec, name, item["valueFrom"] or {})
        if value is not None:
            env[name] = value
    return env


def _env_from(client: ClusterClient, namespace: str, source: dict[str, Any]) -> dict[str, str]:
    """The variables one ``envFrom`` entry brings in (ConfigMap and/or Secret, prefixed)."""
    prefix = source.get("prefix", "")
    out: dict[str, str] = {}
    for gvr, ref_key in ((CONFIGMAPS, "configMapRef"), (SECRETS, "secretRef")):
        ref = source.get(ref_key)
        if ref:
            data = object_data(
                client, gvr, namespace, ref.get("name", ""), bool(ref.get("optional"))
            )
            out.update({prefix + k: v for k, v in (data or {}).items()})
    return out


def _value_from(
    client: ClusterClient,
    record: PodRecord,
    spec: dict[str, Any],
    name: str,
    source: dict[str, Any],
) -> str | None:
    """The value of one ``env[].valueFrom``; None when an optional key is missing."""
    if "fieldRef" in source:
        return field_value(record, source["fieldRef"].get("fieldPath", ""))
    if "resourceFieldRef" in source:
        return _resource_value(spec, source["resourceFieldRef"])
    if "configMapKeyRef" in source:
        return _key_ref(client, CONFIGMAPS, record.namespace, source["configMapKeyRef"])
    if "secretKeyRef" in source:
        return _key_ref(client, SECRETS, record.namespace, source["secretKeyRef"])
    raise ContainerConfigError(f"unsupported valueFrom for {name}")


def container_argv(spec: dict[str, Any], env: dict[str, str]) -> list[str]:
    """command + args with ``$(VAR)`` expanded; empty when the container has no command."""
    command = spec.get("command") or []
    if not command:
        return []
    return [expand(str(part), env) for part in [*command, *(spec.get("args") or [])]]
