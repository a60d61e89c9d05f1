"""Putting a kind's injected environment into a pod template's containers, each variable once.

training-operator v1.9's kinds append their variables to what the template had, so a variable the
user also set was defined twice and the operator's won (the later definition). Here the operator's
replaces the user's where it stood and the others are appended in the kind's order, so each name is
defined once (as D30 does for ``TF_CONFIG`` and the PyTorchJob kind for its variables; divergences
D130, D131, D132). An entry is a plain ``EnvVar`` dict: ``{"name", "value"}`` or ``{"name",
"valueFrom"}`` (the downward API).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tf_operator.k8s.objects import Obj

EnvEntry = dict[str, Any]


def value(name: str, text: str) -> EnvEntry:
    return {"name": name, "value": text}


def field_ref(name: str, field_path: str) -> EnvEntry:
    """A variable the kubelet fills from the pod (``status.podIP``)."""
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}


def put_env(template: Obj, entries: Sequence[EnvEntry]) -> None:
    """Put ``entries`` into every container of ``template``: one the container set is replaced
    in place, the others appended in order."""
    ours = {entry["name"]: entry for entry in entries}
    for container in (template.get("spec") or {}).get("containers") or []:
        kept: list[EnvEntry] = []
        placed: set[str] = set()
        for entry in container.get("env") or []:
            name = entry.get("name")
            if name in ours:
                if name not in placed:
                    kept.append(dict(ours[name]))
                    placed.add(name)
                continue
            kept.append(entry)
        kept += [dict(e) for n, e in ours.items() if n not in placed]
        container["env"] = kept
