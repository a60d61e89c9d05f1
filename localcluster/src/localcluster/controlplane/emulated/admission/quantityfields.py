"""Where the built-in kinds hold ``resource.Quantity`` values, stored in canonical form.

kube-apiserver decodes a body into Go structs and encodes what it stores from them, so every
quantity a built-in kind holds comes back as ``Quantity.String()`` (``quantity.canonical``):
``1`` becomes ``"1"``, ``"1000m"`` becomes ``"1"``, ``0.5`` becomes ``"500m"``. Custom resources
are unstructured and keep what the client wrote.

The table lists each quantity field by its JSON path (``[]`` steps into every item of a list)
and the Go struct that declares it, which names the field in decoder errors. A ``ResourceList``
is a map of quantities (a null entry decodes as a zero quantity, ``"0"``); a single quantity
(``emptyDir.sizeLimit``) that is null stays absent (``decoding`` applies these rules). The
paths form one ``tree`` per kind; ``rewrite`` walks it once and copies only the dicts and lists on the way to a changed value, so the caller's
object is never modified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

RESOURCE_LIST, SINGLE = "v1.ResourceList", "resource.Quantity"

# (JSON path inside a PodSpec, declaring Go struct, kind of field)
_POD_SPEC: tuple[tuple[str, str, str], ...] = (
    *(
        (f"{containers}[].resources.{part}", "ResourceRequirements", RESOURCE_LIST)
        for containers in ("containers", "initContainers", "ephemeralContainers")
        for part in ("limits", "requests")
    ),
    ("overhead", "PodSpec", RESOURCE_LIST),
    ("resources.limits", "ResourceRequirements", RESOURCE_LIST),
    ("resources.requests", "ResourceRequirements", RESOURCE_LIST),
    ("volumes[].emptyDir.sizeLimit", "EmptyDirVolumeSource", SINGLE),
    *(
        (
            f"volumes[].ephemeral.volumeClaimTemplate.spec.resources.{part}",
            "VolumeResourceRequirements",
            RESOURCE_LIST,
        )
        for part in ("limits", "requests")
    ),
)
_POD_STATUS: tuple[tuple[str, str, str], ...] = tuple(
    entry
    for statuses in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")
    for entry in (
        (f"{statuses}[].allocatedResources", "ContainerStatus", RESOURCE_LIST),
        (f"{statuses}[].resources.limits", "ResourceRequirements", RESOURCE_LIST),
        (f"{statuses}[].resources.requests", "ResourceRequirements", RESOURCE_LIST),
    )
)
_CLAIM_SPEC = (
    ("resources.limits", "VolumeResourceRequirements", RESOURCE_LIST),
    ("resources.requests", "VolumeResourceRequirements", RESOURCE_LIST),
)
_CLAIM_STATUS = (
    ("capacity", "PersistentVolumeClaimStatus", RESOURCE_LIST),
    ("allocatedResources", "PersistentVolumeClaimStatus", RESOURCE_LIST),
)
_NODE_STATUS = (
    ("capacity", "NodeStatus", RESOURCE_LIST),
    ("allocatable", "NodeStatus", RESOURCE_LIST),
)
_TEMPLATE = (("spec.template.spec", _POD_SPEC),)

# storage key -> (path prefix, fields under it)
_KINDS: dict[tuple[str, str], tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...]] = {
    ("", "pods"): (("spec", _POD_SPEC), ("status", _POD_STATUS)),
    ("", "nodes"): (("status", _NODE_STATUS),),
    ("", "persistentvolumeclaims"): (("spec", _CLAIM_SPEC), ("status", _CLAIM_STATUS)),
    ("", "resourcequotas"): (
        ("spec", (("hard", "ResourceQuotaSpec", RESOURCE_LIST),)),
        (
            "status",
            (
                ("hard", "ResourceQuotaStatus", RESOURCE_LIST),
                ("used", "ResourceQuotaStatus", RESOURCE_LIST),
            ),
        ),
    ),
    ("apps", "deployments"): _TEMPLATE,
    ("apps", "replicasets"): _TEMPLATE,
    ("apps", "daemonsets"): _TEMPLATE,
    ("apps", "statefulsets"): (
        *_TEMPLATE,
        ("spec.volumeClaimTemplates[].spec", _CLAIM_SPEC),
        ("spec.volumeClaimTemplates[].status", _CLAIM_STATUS),
    ),
    ("batch", "jobs"): _TEMPLATE,
}


@dataclass(frozen=True)
class Field:
    """One quantity field: its Go name as decoder errors give it, and its kind."""

    go_field: str
    kind: str  # RESOURCE_LIST or SINGLE


Tree = dict[str, "Tree | Field"]  # JSON step ("x" or "x[]" for every item of list x) -> below


def tree(storage_key: tuple[str, str]) -> Tree:
    """Every quantity field of a kind, as a tree of steps (empty for kinds without any and
    for custom resources), so one walk visits each list once."""
    return _TREES.get(storage_key, {})


def _tree(storage_key: tuple[str, str]) -> Tree:
    root: Tree = {}
    for prefix, entries in _KINDS[storage_key]:
        for path, struct, kind in entries:
            full = f"{prefix}.{path}"
            *steps, last = full.split(".")
            node = root
            for step in steps:
                node = node.setdefault(step, {})  # type: ignore[assignment]  # steps lead to Trees, only leaves are Fields
            node[last] = Field(f"{struct}.{full.replace('[]', '')}", kind)
    return root


_TREES = {key: _tree(key) for key in _KINDS}


def rewrite(node: Any, fields: Tree, apply: Callable[[Field, Any], Any]) -> Any:
    """``node`` with ``apply(field, value)`` done at every field of the tree: the same object
    when nothing changed, else fresh copies of the dicts and lists on the way. Absent or null
    values, and values of the wrong JSON type on the way, are left alone."""
    if not isinstance(node, dict):
        return node
    out = node
    for step, below in fields.items():
        key = step[:-2] if step.endswith("[]") else step
        child = node.get(key)
        if child is None:
            continue
        if isinstance(below, Field):
            new = apply(below, child)
        elif not step.endswith("[]"):
            new = rewrite(child, below, apply)
        elif isinstance(child, list):
            items = [rewrite(item, below, apply) for item in child]
            changed = any(a is not b for a, b in zip(items, child, strict=True))
            new = items if changed else child
        else:
            continue
        if new is not child:
            out = dict(node) if out is node else out
            out[key] = new
    return out
