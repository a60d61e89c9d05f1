"""CustomResourceDefinition support: turning a CRD object into a served ``ResourceType`` and
computing the CRD's status (accepted names, stored versions, NamesAccepted/Established).

Several versions are served as apiextensions-apiserver serves them with conversion ``None``:
objects are stored at the storage version, every served version reads, writes and watches them
with ``apiVersion`` rewritten, discovery lists each served version (the highest-priority one
preferred), and ``status.storedVersions`` gains every version ever marked for storage until a
status write (a storage migration) drops one; it must stay within ``spec.versions``.

The registry calls ``resource_type_for`` synchronously inside the CRD write, so the new
group/version/plural is served (and in discovery) before the write returns.
"""

from __future__ import annotations

import re
from typing import Any, cast

from localcluster.controlplane.emulated.resources import ResourceType

_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[Any, ...]:
    """Sort key putting versions in Kubernetes preference order (v2 > v1 > v1beta2 > v1alpha1 > x)."""
    m = _VERSION_RE.match(version)
    if not m:
        return (3, version)
    major, track, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[track]
    return (rank, -major, -minor)


def served_versions(crd: dict[str, Any]) -> list[dict[str, Any]]:
    versions = [v for v in (crd.get("spec") or {}).get("versions") or [] if v.get("served", True)]
    return sorted(versions, key=lambda v: version_priority(v.get("name", "")))


def resource_type_for(crd: dict[str, Any]) -> ResourceType:
    spec = crd["spec"]
    names = spec["names"]
    versions = served_versions(crd)
    subresources = tuple(
        sub
        for sub in ("status", "scale")
        if any((v.get("subresources") or {}).get(sub) is not None for v in versions)
    )
    return ResourceType(
        group=spec["group"],
        versions=[v["name"] for v in versions],
        plural=names["plural"],
        singular=names.get("singular") or names["kind"].lower(),
        kind=names["kind"],
        namespaced=spec.get("scope") == "Namespaced",
        short_names=list(names.get("shortNames") or []),
        categories=list(names.get("categories") or []),
        subresources=subresources,
        generation=True,
        crd=crd,
        storage_version=storage_version(crd),
    )


def storage_version(crd: dict[str, Any]) -> str | None:
    """The name of the version marked ``storage: true`` (validation allows exactly one)."""
    for v in (crd.get("spec") or {}).get("versions") or []:
        if v.get("storage"):
            return str(v.get("name"))
    return None


def version_spec(crd: dict[str, Any], version: str) -> dict[str, Any]:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if v.get("name") == version:
            return cast(dict[str, Any], v)
    return {}


def schema_for(crd: dict[str, Any], version: str) -> dict[str, Any] | None:
    return (version_spec(crd, version).get("schema") or {}).get("openAPIV3Schema")


def printer_columns(crd: dict[str, Any], version: str) -> list[dict[str, Any]]:
    return list(version_spec(crd, version).get("additionalPrinterColumns") or [])


def crd_status(crd: dict[str, Any], old_status: dict[str, Any] | None, now: str) -> dict[str, Any]:
    spec = crd["spec"]
    names = dict(spec["names"])
    names.setdefault("singular", names["kind"].lower())
    names.setdefault("listKind", names["kind"] + "List")
    stored = list((old_status or {}).get("storedVersions") or [])
    for v in spec.get("versions") or []:
        if v.get("storage") and v["name"] not in stored:
            stored.append(v["name"])
    old_conditions = {c.get("type"): c for c in (old_status or {}).get("conditions") or []}

    def condition(ctype: str, reason: str, message: str) -> dict[str, Any]:
        prev = old_conditions.get(ctype)
        since = prev["lastTransitionTime"] if prev and prev.get("status") == "True" else now
        return {
            "type": ctype,
            "status": "True",
            "lastTransitionTime": since,
            "reason": reason,
            "message": message,
        }

    return {
        "acceptedNames": names,
        "storedVersions": stored,
        "conditions": [
            condition("NamesAccepted", "NoConflicts", "no conflicts found"),
            condition(
                "Established", "InitialNamesAccepted", "the initial names have been accepted"
            ),
        ],
    }


def scale_paths(crd: dict[str, Any], version: str) -> dict[str, Any]:
    """``specReplicasPath``, ``statusReplicasPath`` and ``labelSelectorPath`` of a CRD version."""
    return dict((version_spec(crd, version).get("subresources") or {}).get("scale") or {})


def selectable_fields(crd: dict[str, Any] | None, version: str) -> frozenset[str]:
    """The field paths a version's ``selectableFields`` lets clients select by."""
    for v in ((crd or {}).get("spec") or {}).get("versions") or []:
        if isinstance(v, dict) and v.get("name") == version:
            return frozenset(
                str(f.get("jsonPath", "")).lstrip(".")
                for f in v.get("selectableFields") or []
                if isinstance(f, dict)
            )
    return frozenset()
