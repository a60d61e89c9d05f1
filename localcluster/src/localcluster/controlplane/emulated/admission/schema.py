"""Structural-schema defaulting and validation for custom resources (OpenAPI v3 subset).

``apply_defaults`` fills ``default`` values for absent properties and drops nulls the schema
does not allow, recursively, like the real server does on create/update. ``validate`` checks ``type``, ``required``, ``enum``, numeric and
length bounds, ``maxProperties``/``minProperties``, ``pattern`` and array items, and returns
``field_cause`` dicts. Integers must fit in int64 (the real decoder turns larger ones into
floats); ``format: int32``/``int64`` set no range, as in apiextensions-apiserver, which ignores
formats it does not list: bounds belong in ``minimum``/``maximum``. CEL rules are ``celrules``. ``prune`` drops
undeclared fields (honouring ``x-kubernetes-preserve-unknown-fields``, ``additionalProperties``
and embedded resources) and reports them, so ``fieldValidation=Strict`` can reject them.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable
from typing import Any

from localcluster.apimachinery.errors import field_cause

_GLOBAL_FLAGS = re.compile(r"\(\?([imsU]+)\)")


@functools.lru_cache(maxsize=512)
def go_pattern(pattern: str) -> re.Pattern[str]:
    """A schema ``pattern`` (Go's RE2 syntax) as a Python regex. RE2 takes a flag group such as
    ``(?i)`` anywhere; Python only at the start, so flag groups are moved there (the rules'
    patterns set them for the whole expression)."""
    try:
        return re.compile(pattern)
    except re.error:
        flags = "".join(_GLOBAL_FLAGS.findall(pattern)).replace("U", "")
        return re.compile(f"(?{flags})" + _GLOBAL_FLAGS.sub("", pattern) if flags else pattern)


def apply_defaults(value: Any, schema: dict[str, Any] | None) -> Any:
    """Fill defaults and drop non-nullable nulls, as apiextensions-apiserver's defaulter does.

    A property that is absent, or null where the schema is not ``nullable``, takes its
    ``default``; a null without a default where the schema is not ``nullable`` is removed
    (so ``replicas: null`` reads as unset, never as a null the validation rules trip on).
    """
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for name in list(value):
            sub = props.get(name, extra)
            if isinstance(sub, dict) and value[name] is None and not sub.get("nullable"):
                if "default" in sub:
                    value[name] = copy.deepcopy(sub["default"])
                else:
                    del value[name]
        for name, sub in props.items():
            if name not in value and isinstance(sub, dict) and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                value[name] = apply_defaults(value[name], sub)
        if isinstance(extra, dict):
            for name in value:
                if name not in props:
                    value[name] = apply_defaults(value[name], extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        if "default" in items and not items.get("nullable"):
            value = [copy.deepcopy(items["default"]) if v is None else v for v in value]
        return [apply_defaults(v, items) for v in value]
    return value


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    # beyond int64 the real server's JSON decoder yields a float, which is no integer
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def validate(value: Any, schema: dict[str, Any] | None, path: str = "") -> list[dict[str, Any]]:
    if not isinstance(schema, dict) or value is None:
        return []
    causes: list[dict[str, Any]] = []
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            causes.append(
                field_cause(
                    path,
                    f"Invalid value: {_show(value)}: must be an integer or a string",
                    "FieldValueTypeInvalid",
                )
            )
            return causes
        return _bounds(value, schema, path)  # a string value still meets its pattern
    typ = schema.get("type")
    if typ in _TYPES and not _TYPES[typ](value):
        got = _json_type(value)
        causes.append(
            field_cause(
                path,
                f'Invalid value: "{got}": {path or "<root>"} in body must be of type {typ}: "{got}"',
                "FieldValueTypeInvalid",
            )
        )
        return causes
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(_show(v) for v in schema["enum"])
        causes.append(
            field_cause(
                path,
                f"Unsupported value: {_show(value)}: supported values: {allowed}",
                "FieldValueNotSupported",
            )
        )
    causes += _bounds(value, schema, path)
    if isinstance(value, dict):
        for req in schema.get("required") or []:
            if req not in value:
                causes.append(field_cause(_join(path, req), "Required value", "FieldValueRequired"))
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for name, sub in value.items():
            if name in props:
                causes += validate(sub, props[name], _join(path, name))
            elif isinstance(extra, dict):
                causes += validate(sub, extra, _join(path, name))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            causes += validate(item, schema["items"], f"{path}[{i}]")
    return causes


# keyword, the JSON type it constrains, whether a value breaks it, the message, the reason
_BOUNDS: tuple[tuple[str, str, Callable[..., Any], Callable[..., Any], str], ...] = (
    (
        "minimum",
        "number",
        lambda v, b: v < b,
        lambda v, b, p: f"Invalid value: {v}: {p} in body should be greater than or equal to {b}",
        "FieldValueInvalid",
    ),
    (
        "maximum",
        "number",
        lambda v, b: v > b,
        lambda v, b, p: f"Invalid value: {v}: {p} in body should be less than or equal to {b}",
        "FieldValueInvalid",
    ),
    (
        "maxLength",
        "string",
        lambda v, b: len(v) > b,
        lambda v, b, p: f"Too long: may not be longer than {b}",
        "FieldValueTooLong",
    ),
    (
        "minLength",
        "string",
        lambda v, b: len(v) < b,
        lambda v, b, p: f'Invalid value: "{v}": {p} in body should be at least {b} chars long',
        "FieldValueInvalid",
    ),
    (
        "pattern",
        "string",
        lambda v, b: not go_pattern(b).search(v),
        lambda v, b, p: f"Invalid value: \"{v}\": {p} in body should match '{b}'",
        "FieldValueInvalid",
    ),
    (
        "maxItems",
        "array",
        lambda v, b: len(v) > b,
        lambda v, b, p: f"Too many: {len(v)}: must have at most {b} items",
        "FieldValueTooMany",
    ),
    (
        "maxProperties",
        "object",
        lambda v, b: len(v) > b,
        lambda v, b, p: f"Too many: {len(v)}: must have at most {b} items",
        "FieldValueTooMany",
    ),
    (
        "minProperties",
        "object",
        lambda v, b: len(v) < b,
        lambda v, b, p: f"Invalid value: {len(v)}: {p} in body should have at least {b} properties",
        "FieldValueInvalid",
    ),
    (
        "minItems",
        "array",
        lambda v, b: len(v) < b,
        lambda v, b, p: f"Invalid value: {len(v)}: {p} in body should have at least {b} items",
        "FieldValueInvalid",
    ),
)


def _bounds(value: Any, schema: dict[str, Any], path: str) -> list[dict[str, Any]]:
    return [
        field_cause(path, message(value, schema[keyword], path), reason)
        for keyword, kind, broken, message, reason in _BOUNDS
        if keyword in schema and _TYPES[kind](value) and broken(value, schema[keyword])
    ]


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _json_type(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and not _TYPES["integer"](v):
        return "number"
    for name in ("boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](v):
            return name
    return "null"


def _show(v: Any) -> str:
    return f'"{v}"' if isinstance(v, str) else str(v)


_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def prune(obj: dict[str, Any], schema: dict[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """Drop fields the structural schema does not declare, as the real server does.

    Returns the pruned object and the dotted paths that were dropped (for ``fieldValidation``).
    ``apiVersion``, ``kind`` and ``metadata`` at the root are always kept.
    """
    if not isinstance(schema, dict):
        return obj, []
    unknown: list[str] = []
    props = schema.get("properties") or {}
    out = {}
    for key, value in obj.items():
        if key in _ROOT_FIELDS:
            out[key] = value
        elif key in props:
            out[key] = _prune(value, props[key], key, unknown)
        elif schema.get("x-kubernetes-preserve-unknown-fields"):
            out[key] = value
        else:
            unknown.append(key)
    return out, unknown


def _prune(value: Any, schema: Any, path: str, unknown: list[str]) -> Any:
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        keep_all = schema.get("x-kubernetes-preserve-unknown-fields") or extra is True
        embedded = schema.get("x-kubernetes-embedded-resource")
        out = {}
        for key, sub in value.items():
            child = _join(path, key)
            if key in props:
                out[key] = _prune(sub, props[key], child, unknown)
            elif isinstance(extra, dict):
                out[key] = _prune(sub, extra, child, unknown)
            elif keep_all or (embedded and key in _ROOT_FIELDS):
                out[key] = sub
            else:
                unknown.append(child)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_prune(v, schema["items"], f"{path}[{i}]", unknown) for i, v in enumerate(value)]
    return value
