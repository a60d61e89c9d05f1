"""Small helpers on plain JSON objects: fast copies, comparisons and depth, timestamps, metadata
access. kube-apiserver stores objects nested up to 10,000 levels; the copies and the comparison
recurse for speed and fall back to an explicit stack when an object is too deep for that."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import orjson

T = TypeVar("T")


def clone(value: T) -> T:
    """Deep copy of JSON data (dicts, lists, scalars); much faster than ``copy.deepcopy``.
    Recursive for speed; a document too deep for the interpreter's stack (kube-apiserver
    stores 10,000 levels) is copied without recursion."""
    try:
        return _clone(value)
    except RecursionError:
        return cast(T, _copy_iteratively(value, lambda scalar: scalar))


def _clone(value: T) -> T:
    if isinstance(value, dict):
        return cast(T, {k: _clone(v) for k, v in value.items()})
    if isinstance(value, list):
        return cast(T, [_clone(v) for v in value])
    return value


def detach(value: Any) -> Any:
    """A deep copy of a decoded request body as plain JSON data: a float that remembered its
    text (``quantity.JSONFloat``) becomes a plain float (without recursion when too deep)."""
    try:
        return _detach(value)
    except RecursionError:
        return _copy_iteratively(value, _plain)


def _plain(value: Any) -> Any:
    return float(value) if isinstance(value, float) and type(value) is not float else value


def _detach(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _detach(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_detach(v) for v in value]
    return _plain(value)


def _copy_iteratively(value: Any, scalar: Callable[[Any], Any]) -> Any:
    """A deep copy of JSON data with an explicit stack instead of recursion."""
    root: list[Any] = [None]
    work: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (source, parent, key in parent)
    while work:
        source, parent, key = work.pop()
        if isinstance(source, dict):
            copy: Any = dict.fromkeys(source)  # the keys in order; their values come later
            work.extend((v, copy, k) for k, v in source.items())
        elif isinstance(source, list):
            copy = [None] * len(source)
            work.extend((v, copy, i) for i, v in enumerate(source))
        else:
            copy = scalar(source)
        parent[key] = copy
    return root[0]


def equal(a: Any, b: Any) -> bool:
    """``a == b`` for JSON data; without recursion for documents too deep for it."""
    try:
        return bool(a == b)
    except RecursionError:
        return _equal_iteratively(a, b)


def _equal_iteratively(a: Any, b: Any) -> bool:
    work = [(a, b)]
    while work:
        x, y = work.pop()
        if isinstance(x, dict):
            if not isinstance(y, dict) or x.keys() != y.keys():
                return False
            work.extend((v, y[k]) for k, v in x.items())
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                return False
            work.extend(zip(x, y, strict=True))
        elif isinstance(y, dict | list) or x != y:
            return False
    return True


# orjson refuses to encode more levels than this, so an object it encodes is no deeper
_ORJSON_DEPTH = 254


def nesting_depth(value: Any) -> int:
    """How many arrays and objects nest in ``value`` at most (0 for a scalar), counted as Go's
    JSON scanner counts them; without recursion."""
    deepest = 0
    work = [(value, 1)]
    while work:
        item, depth = work.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        work.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def deeper_than(value: Any, levels: int) -> bool:
    """Whether ``value`` nests more than ``levels`` deep. An ordinary object costs one orjson
    encoding (it stops at 254 levels); only one it refuses is measured."""
    if levels < _ORJSON_DEPTH:
        return nesting_depth(value) > levels
    try:
        orjson.dumps(value)
    except TypeError:
        return nesting_depth(value) > levels
    return False


def format_time(t: float) -> str:
    """metav1.Time: RFC 3339, UTC, whole seconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def format_micro_time(t: float) -> str:
    """metav1.MicroTime: RFC 3339, UTC, microseconds."""
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> float | None:
    """Parse an RFC 3339 timestamp (``Z`` or an offset, optional fraction); None if unparsable."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (ValueError, AttributeError):
        return None


def normalise_micro_time(value: Any) -> Any:
    if isinstance(value, str):
        t = parse_time(value)
        if t is not None:
            return format_micro_time(t)
    return value


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def strip_nulls(obj: dict[str, Any]) -> dict[str, Any]:
    """Drop top-level and metadata keys whose value is null (clients send ``"x": null``)."""
    out = {k: v for k, v in obj.items() if v is not None}
    if isinstance(out.get("metadata"), dict):
        out["metadata"] = {k: v for k, v in out["metadata"].items() if v is not None}
    return out
