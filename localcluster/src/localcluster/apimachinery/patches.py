"""Patch semantics: JSON merge patch (RFC 7386), JSON patch (RFC 6902, via ``jsonpatch``) and
strategic merge patch for built-in kinds.

Strategic merge knows lists by their field name (and, for ``ports``, by the kind): lists with a
merge key merge item by item, ``finalizers`` merge as a set, every other list is replaced. The
directives ``$patch`` (merge/replace/delete), ``$retainKeys``, ``$setElementOrder/<list>`` and
``$deleteFromPrimitiveList/<list>`` are honoured; none of them is ever stored.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any, cast

import jsonpatch

from localcluster.apimachinery import deepjson, errors
from localcluster.apimachinery.errors import StatusError, bad_request
from localcluster.apimachinery.objects import clone, deeper_than


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
    """RFC 7386: objects merge recursively, null deletes, anything else replaces. Written with
    an explicit stack (kube-apiserver merges objects nested 10,000 levels)."""
    if not isinstance(patch, dict):
        return clone(patch)
    result = dict(target) if isinstance(target, dict) else {}
    work = [(result, patch)]
    while work:
        merged, changes = work.pop()
        for key, value in changes.items():
            if value is None:
                merged.pop(key, None)
            elif isinstance(value, dict):
                inner = merged.get(key)
                merged[key] = inner = dict(inner) if isinstance(inner, dict) else {}
                work.append((inner, value))
            else:
                merged[key] = clone(value)
    return result


class _CopiedObject(dict[str, Any]):
    """An operation's object value. jsonpatch copies values with ``copy.deepcopy``, which
    recurses; this one is copied as the server copies objects (``objects.clone``, any depth)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return clone(dict(self))


class _CopiedArray(list[Any]):
    """An operation's array value, copied as :class:`_CopiedObject` is."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return clone(list(self))


def _copied(op: Any) -> Any:
    if not isinstance(op, dict):
        return op
    value = op.get("value")
    if isinstance(value, dict):
        return {**op, "value": _CopiedObject(value)}
    if isinstance(value, list):
        return {**op, "value": _CopiedArray(value)}
    return op


_REJECTED = "the server rejected our request due to an error in our request"


def json_patch(target: dict[str, Any], ops: Any) -> dict[str, Any]:
    """RFC 6902 patch applied to ``target`` in place; a malformed patch is 400, a failing
    operation 422, and so is a result nested deeper than kube-apiserver decodes it again."""
    if not isinstance(ops, list):
        raise bad_request("json patch must be a JSON array of operations")
    try:
        patch = jsonpatch.JsonPatch([_copied(op) for op in ops])
    except (jsonpatch.InvalidJsonPatch, TypeError, AttributeError) as e:
        # operations are checked as they are applied: an unknown or incomplete one fails then
        raise StatusError(422, "Invalid", _REJECTED, {}) from e
    try:
        result = cast(dict[str, Any], patch.apply(target, in_place=True))
    except RecursionError as e:
        # a copy or test operation on a value too deep for jsonpatch's recursion (D74)
        raise StatusError(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request: a JSON patch "
            "operation copies or tests a value nested too deeply for this server",
        ) from e
    except (
        jsonpatch.InvalidJsonPatch,
        TypeError,
        KeyError,
        AttributeError,
        jsonpatch.JsonPatchException,
        jsonpatch.JsonPointerException,
        IndexError,
    ) as e:
        # kube-apiserver says no more than this about an operation that fails
        raise StatusError(422, "Invalid", _REJECTED, {}) from e
    if deeper_than(result, deepjson.MAX_DEPTH):
        raise _too_deep(result)
    return result


def _too_deep(result: Any) -> StatusError:
    """kube-apiserver decodes a JSON patch's result again: one nested too deep for its decoder
    is a 422 on the field ``patch``, whose value is the patched document."""
    text = deepjson.dumps(result)
    try:
        deepjson.loads(text)
        reason = "exceeded max depth"  # not reached: the caller measured the depth
    except deepjson.JSONSyntaxError as e:
        reason = str(e)
    value = json.dumps(text.decode(), ensure_ascii=False)
    why = f"Invalid value: {value}: couldn't get version/kind; json parse error: {reason}"
    return errors.invalid("", "", "", "", [errors.field_cause("patch", why)])


def _merge_key(field: str, kind: str, in_container: bool) -> str | None:
    if field == "ports":
        if kind == "Service":
            return "port"
        return "containerPort" if in_container else None
    return _MERGE_KEYS.get(field)


def strategic_merge(target: Any, patch: Any, kind: str = "") -> Any:
    """Apply a strategic merge patch for an object of built-in ``kind``."""
    return _run(_merge_object(target, patch, kind, False))


# A merge step: a generator that yields the merges it needs done (their results are sent back)
# and returns its own. ``_run`` drives them with an explicit stack, so an object nested deeper
# than the interpreter recurses (kube-apiserver patches 10,000 levels) merges all the same.
_Merge = Generator[Any, Any, Any]


def _run(merge: _Merge) -> Any:
    stack = [merge]
    result: Any = None
    while stack:
        try:
            needed = stack[-1].send(result)
        except StopIteration as done:
            stack.pop()
            result = done.value
        else:
            stack.append(needed)
            result = None
    return result


def _merge_object(target: Any, patch: Any, kind: str, in_container: bool) -> _Merge:
    if not isinstance(patch, dict):
        return clone(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: clone(v) for k, v in patch.items() if not k.startswith("$")}
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
            result[key] = yield _merge_list(result.get(key), value, key, kind, in_container)
        elif isinstance(value, dict):
            merged = yield _merge_object(result.get(key), value, kind, in_container)
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
) -> _Merge:
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
            out.append((yield _merge_object({}, item, kind, child_in_container)))
        else:
            out[idx] = yield _merge_object(out[idx], item, kind, child_in_container)
    return out


def _strip(value: Any) -> Any:
    """A copy of a value that is stored as is, without its directive keys."""
    root: list[Any] = [None]
    work: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while work:
        source, parent, at = work.pop()
        if isinstance(source, dict):
            copy: Any = {k: None for k in source if not k.startswith("$")}
            work.extend((source[k], copy, k) for k in copy)
        elif isinstance(source, list):
            copy = [None] * len(source)
            work.extend((v, copy, i) for i, v in enumerate(source))
        else:
            copy = source
        parent[at] = copy
    return root[0]
