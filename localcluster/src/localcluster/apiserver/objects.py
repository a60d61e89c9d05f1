"""Small helpers on plain JSON objects: fast copies, timestamps, metadata access."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

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
            copy: Any = {}
            work.extend((v, copy, k) for k, v in source.items())
        elif isinstance(source, list):
            copy = [None] * len(source)
            work.extend((v, copy, i) for i, v in enumerate(source))
        else:
            copy = scalar(source)
        parent[key] = copy
    return root[0]


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
