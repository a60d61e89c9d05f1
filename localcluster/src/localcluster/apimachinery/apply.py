"""Server-side apply, simplified: the applied configuration is merged over the live object, and
fields the same manager applied last time but no longer applies are removed.

Each manager's applied field set is recorded in ``metadata.managedFields`` (operation
``Apply``, ``fieldsV1`` with ``f:`` keys; lists count as one field), so the bookkeeping lives and
dies with the object. Conflicts between managers are not detected (``force`` is accepted and
ignored); other operations do not record managed fields (divergence D190).
"""

from __future__ import annotations

from typing import Any

from localcluster.apimachinery.objects import clone, meta

_NEVER_REMOVED = {("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace")}


def fields_v1(value: Any) -> dict[str, Any]:
    """The ``fieldsV1`` set of an applied configuration (maps recurse; anything else is a leaf),
    built with an explicit stack: applied objects nest as deep as stored ones (10,000 levels)."""
    root: dict[str, Any] = {}
    work = [(value, root)]
    while work:
        applied, fields = work.pop()
        if not isinstance(applied, dict):
            continue
        for key, child in applied.items():
            if key != "managedFields":
                inner: dict[str, Any] = {}
                fields[f"f:{key}"] = inner
                work.append((child, inner))
    return root


def leaf_paths(fields: dict[str, Any]) -> set[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    work: list[tuple[dict[str, Any], tuple[str, ...]]] = [(fields, ())]
    while work:
        level, prefix = work.pop()
        for key, sub in level.items():
            path = prefix + (key[2:] if key.startswith("f:") else key,)
            if isinstance(sub, dict) and sub:
                work.append((sub, path))
            else:
                out.add(path)
    return out


def _delete_path(obj: dict[str, Any], path: tuple[str, ...]) -> None:
    cur: Any = obj
    for part in path[:-1]:
        cur = cur.get(part) if isinstance(cur, dict) else None
        if cur is None:
            return
    if isinstance(cur, dict):
        cur.pop(path[-1], None)


def previous_fields(live: dict[str, Any], manager: str) -> dict[str, Any] | None:
    for entry in meta(live).get("managedFields") or []:
        if (
            isinstance(entry, dict)
            and entry.get("manager") == manager
            and entry.get("operation") == "Apply"
        ):
            return entry.get("fieldsV1") or {}
    return None


def finish(
    result: dict[str, Any],
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    manager: str,
    api_version: str,
    now: str,
) -> dict[str, Any]:
    """Drop the fields ``manager`` stopped applying and record what it applies now."""
    fields = fields_v1({k: v for k, v in applied.items() if k not in ("apiVersion", "kind")})
    result = clone(result)  # merged results share subtrees with the (immutable) stored object
    if live is not None:
        before = previous_fields(live, manager)
        if before is not None:
            for path in leaf_paths(before) - leaf_paths(fields) - _NEVER_REMOVED:
                _delete_path(result, path)
    entries = [
        e
        for e in (meta(live).get("managedFields") if live is not None else None) or []
        if not (
            isinstance(e, dict) and e.get("manager") == manager and e.get("operation") == "Apply"
        )
    ]
    entries.append(
        {
            "manager": manager,
            "operation": "Apply",
            "apiVersion": api_version,
            "time": now,
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        }
    )
    result.setdefault("metadata", {})["managedFields"] = entries
    return result
