"""Node pools: groups of identical nodes with their own capacity, labels and taints.

``NodePool(name="gpu", count=2, gpus=1, labels={"resType": "GPU"}, taints=[...])`` gives nodes
``gpu-0`` and ``gpu-1``. On the command line a pool is one ``--node-pool`` value:
``name=gpu,count=2,cpu=8,memory=32Gi,gpus=1,pods=110,labels=k=v;k2=v2,taints=k=v:NoSchedule``
(labels and taints separated by ``;``; a taint is ``key[=value]:Effect``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_KEYS = ("name", "count", "cpu", "memory", "gpus", "pods", "labels", "taints")


@dataclass
class NodePool:
    name: str
    count: int = 1
    cpu: str = "8"
    memory: str = "32Gi"
    gpus: int = 0
    pods: int = 110
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)

    def node_names(self) -> list[str]:
        return [f"{self.name}-{i}" for i in range(self.count)]


def parse_taint(text: str) -> dict[str, Any]:
    """``key[=value]:Effect`` -> a core/v1 Taint; raises ValueError."""
    spec, sep, effect = text.rpartition(":")
    if not sep or effect not in TAINT_EFFECTS:
        raise ValueError(f"taint {text!r}: expected key[=value]:{'|'.join(TAINT_EFFECTS)}")
    key, _, value = spec.partition("=")
    if not key:
        raise ValueError(f"taint {text!r} has no key")
    taint = {"key": key, "effect": effect}
    if value:
        taint["value"] = value
    return taint


def parse_node_pool(text: str) -> NodePool:
    """One ``--node-pool`` value (see module docstring); raises ValueError."""
    fields: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in _KEYS:
            raise ValueError(f"node pool {text!r}: unexpected {item!r} (keys: {', '.join(_KEYS)})")
        fields[key] = value
    if not fields.get("name"):
        raise ValueError(f"node pool {text!r} needs a name")
    labels = {}
    for item in filter(None, fields.get("labels", "").split(";")):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"node pool label {item!r}: expected key=value")
        labels[key] = value
    taints = [parse_taint(t) for t in filter(None, fields.get("taints", "").split(";"))]
    return NodePool(
        name=fields["name"],
        count=int(fields.get("count", 1)),
        cpu=fields.get("cpu", "8"),
        memory=fields.get("memory", "32Gi"),
        gpus=int(fields.get("gpus", 0)),
        pods=int(fields.get("pods", 110)),
        labels=labels,
        taints=taints,
    )
