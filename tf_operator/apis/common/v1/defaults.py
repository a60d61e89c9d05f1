"""Defaulting every kind shares: a replica spec's count and restart policy, and the default
port on the kind's default container (``SetDefaults`` helpers of training-operator v1.9's
``common`` package). Defaults are applied in memory only, never written to the stored job."""

from __future__ import annotations

from typing import Any

from tf_operator.apis.common.v1.types import ReplicaSpec


def set_default_port(
    template: dict[str, Any], container_name: str, port_name: str, port: int
) -> None:
    """Append a ``port_name`` port to the ``container_name`` container (container 0 when none
    has that name) unless it has one."""
    containers = (template.get("spec") or {}).get("containers") or []
    if not containers:
        return
    index = 0
    for i, container in enumerate(containers):
        if isinstance(container, dict) and container.get("name") == container_name:
            index = i
            break
    container = containers[index]
    if not isinstance(container, dict):
        return
    ports = container.get("ports") or []
    if any(isinstance(p, dict) and p.get("name") == port_name for p in ports):
        return
    container["ports"] = [*ports, {"name": port_name, "containerPort": port}]


def set_default_replicas(spec: ReplicaSpec, restart_policy: str) -> None:
    """``replicas`` 1 and the kind's restart policy where the spec gives none."""
    if spec.replicas is None:
        spec.replicas = 1
    if not spec.restart_policy:
        spec.restart_policy = restart_policy
