"""Reading typed fields out of a job's JSON, shared by every API type of every kind.

Each helper checks the JSON type of one field and raises :class:`DecodeError` naming its path
(``spec.runPolicy.backoffLimit: expected an integer, got 'two'``), so the controller reports a
malformed object instead of crashing. ``rest`` keeps the keys a type does not model, which its
``to_dict`` writes back: a round trip never loses a field.
"""

from __future__ import annotations

from typing import Any

from tf_operator.k8s.objects import json_copy


class DecodeError(ValueError):
    """A JSON document does not have the shape of the API type."""


def expect_dict(value: Any, path: str, allow_none: bool = True) -> dict[str, Any] | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, dict):
        raise DecodeError(f"{path}: expected an object, got {type(value).__name__}")
    return value


def opt_int(data: dict[str, Any], key: str, path: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        # JSON numbers such as 2.0 are accepted as integers, like Go's decoder does.
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise DecodeError(f"{path}.{key}: expected an integer, got {value!r}")
    return value


def opt_str(data: dict[str, Any], key: str, path: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise DecodeError(f"{path}.{key}: expected a string, got {value!r}")
    return value


def opt_bool(data: dict[str, Any], key: str, path: str) -> bool | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise DecodeError(f"{path}.{key}: expected a boolean, got {value!r}")
    return value


def rest(data: dict[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    """The keys of ``data`` outside ``known``, copied."""
    return {k: json_copy(v) for k, v in data.items() if k not in known}


def put_present(out: dict[str, Any], pairs: tuple[tuple[str, Any], ...]) -> None:
    """Write each ``(key, value)`` whose value is not None (Go's ``omitempty`` on pointers)."""
    for key, value in pairs:
        if value is not None:
            out[key] = value
