"""Patch semantics: JSON merge patch (RFC 7386), JSON patch (RFC 6902, via ``jsonpatch``) and
strategic merge patch for built-in kinds.

Strategic merge knows lists by their field name (and, for ``ports``, by the kind): lists with a
merge key merge item by item, ``finalizers`` merge as a set, every other list is replaced. The
directives ``$patch`` (merge/replace/delete), ``$retainKeys``, ``$setElementOrder/<list>`` and
``$deleteFromPrimitiveList/<list>`` are honoured; none of them is ever stored.
"""

from __future__ import annotations

import copy
from typing import Any, cast

import jsonpatch

from .errors import StatusError, bad_request


def accepted_content_types(custom: bool) -> list[str]:
    """The patch content types a resource takes: custom resources take no strategic merge."""
    return [c for c, t in CONTENT_TYPES.items() if not (custom and t == "strategic")]


_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "imagePullSecrets": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "conditions": "type",
    "ownerReferences": "uid",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "addresses": "type",
    "taints": "key",
    "readinessGates": "conditionType",
    "containerStatuses": "name",
    "initContainerStatuses": "name",
}
# content type -> patch type, in the order the real server lists them in a 415
CONTENT_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
_SET_LISTS = {"finalizers"}
_ORDER_PREFIX = "$setElementOrder/"
_DELETE_PRIMITIVE_PREFIX = "$deleteFromPrimitiveList/"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: dict[str, Any], ops: Any) -> dict[str, Any]:
    """RFC 6902 patch; a malformed patch is 400, a failing operation 422."""
    if not isinstance(ops, list):
        raise bad_request("json patch must be a JSON array of operations")
    try:
        patch = jsonpatch.JsonPatch(ops)
    except (jsonpatch.InvalidJsonPatch, TypeError, AttributeError) as e:
        raise bad_request(f"invalid JSON patch: {e}") from e
    try:
        return cast(dict[str, Any], patch.apply(target))
    except (jsonpatch.InvalidJsonPatch, TypeError, KeyError, AttributeError) as e:
        raise bad_request(f"invalid JSON patch: {e}") from e
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, IndexError) as e:
        raise StatusError(
            422, "Invalid", f"the server rejected our request due to an error in our request: {e}"
        ) from e


def _merge_key(field: str, kind: str, in_container: bool) -> str | None:
    if field == "ports":
        if kind == "Service":
            return "port"
        return "containerPort" if in_container else None
    return _MERGE_KEYS.get(field)


def strategic_merge(target: Any, patch: Any, kind: str = "", _in_container: bool = False) -> Any:
    """Apply a strategic merge patch for an object of built-in ``kind``."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return {
            k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch" and not k.startswith("$")
        }
    if directive == "delete":
        return None
    result = dict(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key.startswith(_ORDER_PREFIX) or key in ("$patch", "$retainKeys"):
            continue
        if key.startswith(_DELETE_PRIMITIVE_PREFIX):
            field = key[len(_DELETE_PRIMITIVE_PREFIX) :]
            drop = set(map(str, value or []))
            if isinstance(result.get(field), list):
                result[field] = [v for v in result[field] if str(v) not in drop]
            continue
        if value is None:
            result.pop(key, None)
            continue
        if isinstance(value, list):
            result[key] = _merge_list(result.get(key), value, key, kind, _in_container)
        elif isinstance(value, dict):
            merged = strategic_merge(result.get(key), value, kind, _in_container)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        else:
            result[key] = value
    if isinstance(retain, list):
        keep = set(retain)
        result = {k: v for k, v in result.items() if k in keep}
    return result


def _merge_list(
    current: Any, patch: list[Any], field: str, kind: str, in_container: bool
) -> list[Any]:
    if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
        return [
            _strip(i) for i in patch if not (isinstance(i, dict) and i.get("$patch") == "replace")
        ]
    current = current if isinstance(current, list) else []
    if field in _SET_LISTS:
        out = list(current)
        for item in patch:
            if item not in out:
                out.append(item)
        return out
    key = _merge_key(field, kind, in_container)
    if key is None or not all(isinstance(i, dict) for i in patch):
        return [_strip(i) for i in patch]
    child_in_container = field in ("containers", "initContainers", "ephemeralContainers")
    out = list(current)
    for item in patch:
        idx = next(
            (
                n
                for n, c in enumerate(out)
                if isinstance(c, dict) and key in item and c.get(key) == item.get(key)
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(strategic_merge({}, item, kind, child_in_container))
        else:
            out[idx] = strategic_merge(out[idx], item, kind, child_in_container)
    return out


def _strip(value: Any) -> Any:
    """Drop directive keys from a value that is stored as is."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
