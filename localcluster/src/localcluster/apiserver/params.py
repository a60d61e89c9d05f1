"""Decoding request bodies and query parameters: JSON/YAML/protobuf bodies, lenient booleans,
integers, ``dryRun``, patch content types and ``DeleteOptions`` from a body, the query or neither."""

from __future__ import annotations

import json
from typing import Any

import yaml

from . import errors, protobuf
from .httpcore import Request

_TRUE = {"true", "1", "t", "yes", "y"}
PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
}


def as_bool(value: str | None) -> bool:
    """Go's ``strconv.ParseBool`` leniency: true/True/1/t are all true."""
    return (value or "").strip().lower() in _TRUE


def as_int(value: str | None, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError as e:
        raise errors.bad_request(f"invalid value for {name}: {value!r}") from e


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise errors.bad_request(
            f"the body of the request could not be decoded as JSON: {e}"
        ) from e


def parse_yaml(raw: bytes) -> Any:
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as e:
        raise errors.bad_request(f"error decoding YAML: {e}") from e


def object_body(req: Request) -> Any:
    """The object in a POST/PUT body, by Content-Type (JSON by default)."""
    if not req.body:
        raise errors.bad_request("the request body is empty")
    ctype = req.header("content-type").lower()
    if ctype.startswith(protobuf.CONTENT_TYPE):
        return protobuf.decode(req.body)
    if "yaml" in ctype:
        return parse_yaml(req.body)
    return parse_json(req.body)


def patch_body(req: Request) -> tuple[str, str, Any]:
    """``(content type, patch type, parsed patch)``; 415 for an unknown patch content type."""
    ctype = req.header("content-type").split(";")[0].strip().lower()
    patch_type = PATCH_TYPES.get(ctype)
    if patch_type is None:
        raise errors.unsupported_media_type(
            f"the body of the request was in an unknown format - accepted media types include: {', '.join(PATCH_TYPES)}"
        )
    return (
        ctype,
        patch_type,
        parse_yaml(req.body) if patch_type == "apply" else parse_json(req.body),
    )


def dry_run(req: Request) -> bool:
    value = req.query.get("dryRun")
    if value and value != "All":
        raise errors.bad_request(f'Invalid value: "{value}": supported values: "All"')
    return value == "All"


def delete_options(req: Request) -> dict[str, Any]:
    """``grace``, ``propagation``, ``preconditions`` and ``dry_run`` from the body or the query."""
    body: dict = {}
    if req.body and req.body.strip():
        parsed = parse_json(req.body)
        if not isinstance(parsed, dict):
            raise errors.bad_request("DeleteOptions must be a JSON object")
        body = parsed
    q = req.query
    grace = body.get("gracePeriodSeconds")
    if grace is None:
        grace = as_int(q.get("gracePeriodSeconds"), "gracePeriodSeconds")
    propagation = body.get("propagationPolicy") or q.get("propagationPolicy") or None
    orphan = body.get("orphanDependents")
    if orphan is None and q.get("orphanDependents"):
        orphan = as_bool(q.get("orphanDependents"))
    if propagation is None and orphan is not None:
        propagation = "Orphan" if orphan else "Background"
    dry = body.get("dryRun") or ([q["dryRun"]] if q.get("dryRun") else [])
    return {
        "grace": int(grace) if grace is not None else None,
        "propagation": propagation,
        "preconditions": body.get("preconditions"),
        "dry_run": "All" in dry,
    }
