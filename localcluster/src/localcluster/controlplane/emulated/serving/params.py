"""Decoding request bodies and query parameters: JSON/YAML/protobuf bodies (415 for any other
content type), lenient booleans, integers, ``resourceVersion`` and ``resourceVersionMatch``
(400/422 as ``ValidateListOptions``), ``dryRun``, patch content types and ``DeleteOptions`` from
a body, the query or neither."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from localcluster.apimachinery import deepjson, errors, patches, quantity
from localcluster.controlplane.emulated.serving import protobuf, yamlbody
from localcluster.controlplane.emulated.serving.httpcore import Request

_TRUE = {"true", "1", "t", "yes", "y"}


def as_bool(value: str | None) -> bool:
    """Go's ``strconv.ParseBool`` leniency: true/True/1/t are all true."""
    return (value or "").strip().lower() in _TRUE


_INT64 = 2**63


def as_int(value: str | None, name: str) -> int | None:
    """A query integer as Go's ``strconv.ParseInt(v, 10, 64)`` reads it; 400 otherwise."""
    if value is None or value == "":
        return None
    try:
        number = int(value, 10)
    except ValueError as e:
        raise errors.bad_request(f"invalid value for {name}: {value!r}") from e
    if not -_INT64 <= number < _INT64 or value.strip() != value or "_" in value:
        raise errors.bad_request(f"invalid value for {name}: {value!r}")
    return number


def resource_version(req: Request, listing: bool = False) -> str | None:
    """The ``resourceVersion`` query parameter: empty or an unsigned decimal. Otherwise a LIST
    is a 400 (``invalid resource version: ...``); a GET or a WATCH fails where the storage
    parses it, a 500 without a reason, as kube-apiserver answers."""
    rv = req.query.get("resourceVersion") or None
    if rv is not None and not (rv.isascii() and rv.isdigit() and int(rv) < 2**64):
        problem = "value out of range" if rv.isascii() and rv.isdigit() else "invalid syntax"
        why = (
            f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing "{rv}": {problem}'
        )
        if listing:
            raise errors.bad_request(f"invalid resource version: {why}")
        raise errors.StatusError(500, "", why)
    return rv


def check_list_options(req: Request, watch: bool) -> None:
    """``ValidateListOptions`` (WatchList enabled): the ``resourceVersionMatch`` and
    ``sendInitialEvents`` rules; 422 ``ListOptions`` is invalid."""
    q = req.query
    match, rv = q.get("resourceVersionMatch") or "", q.get("resourceVersion") or ""
    initial = q.get("sendInitialEvents") is not None
    forbidden: list[str] = []
    supported = ("NotOlderThan",) if watch else ("Exact", "NotOlderThan")
    if watch and initial and match != "NotOlderThan":
        forbidden.append("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
    if not watch and initial:
        forbidden.append("sendInitialEvents is forbidden for list")
    if match:
        if watch and not initial:
            forbidden.append(
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
            )
        if not watch and not rv:
            forbidden.append("resourceVersionMatch is forbidden unless resourceVersion is provided")
        if q.get("continue"):
            forbidden.append("resourceVersionMatch is forbidden when continue is provided")
        if not watch and match == "Exact" and rv == "0":
            forbidden.append('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
    causes = [
        errors.field_cause(
            "sendInitialEvents"
            if why.startswith("sendInitialEvents is")
            else "resourceVersionMatch",
            f"Forbidden: {why}",
            "FieldValueForbidden",
        )
        for why in forbidden
    ]
    if match and match not in supported:
        allowed = ", ".join(f'"{m}"' for m in (*supported, "")[: len(supported) + (not watch)])
        causes.append(
            errors.field_cause(
                "resourceVersionMatch",
                f'Unsupported value: "{match}": supported values: {allowed}',
                "FieldValueNotSupported",
            )
        )
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "ListOptions", "", causes)


def list_reading(req: Request) -> tuple[int | None, str | None, int | None]:
    """(limit, continue token, exact RV) of a LIST, as kube-apiserver reads its options: a
    limit of 0 or below is none, and so is any limit with ``resourceVersion=0`` (served from the
    watch cache); a ``resourceVersion`` with ``resourceVersionMatch=Exact``, or with a limit
    and no match (the legacy form), is read at exactly that RV; any other RV accepts the latest
    state. A continue token carries its own RV: 400 beside any other than "0"."""
    q = req.query
    limit = as_int(q.get("limit"), "limit")
    continue_token = q.get("continue") or None
    rv, match = q.get("resourceVersion") or "", q.get("resourceVersionMatch") or ""
    if continue_token and rv not in ("", "0"):
        raise errors.bad_request("specifying resource version is not allowed when using continue")
    if rv == "0":  # served whole from the watch cache, a continue token's start kept
        limit = None
    if limit is not None and limit <= 0:
        limit = None
    exact = (
        not continue_token and rv not in ("", "0") and (match == "Exact" or (not match and limit))
    )
    return limit, continue_token, int(rv) if exact else None


def _no_constant(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


def _finite_float(text: str) -> float:
    value = quantity.JSONFloat(text)
    if math.isinf(value):
        raise ValueError(f"cannot unmarshal number {text} into Go value of type float64")
    return value


# What orjson would read differently from the standard parser below: a number with a fraction
# or an exponent (a float whose text must be kept) and 19 digits or more (orjson turns integers
# beyond 64 bits into floats). Looked for anywhere, inside strings too: a false match only
# costs the slower parser.
_NOT_FOR_ORJSON = re.compile(rb"[\[:,]\s*-?\d+[.eE]|\d{19}")


def _json(raw: bytes) -> Any:
    """Strict JSON (no NaN/Infinity and no float overflow, which Go's decoder rejects). Floats
    keep their text (``quantity.JSONFloat``) until the registry stores the body as plain JSON.
    An object or array with neither goes through orjson (the same result, several times
    faster), anything else through the standard parser; a body both refuse (too deep for them,
    or malformed) is read as Go reads it (``deepjson``: nesting to 10,000 levels, and Go's
    verdict and message, a ``deepjson.JSONSyntaxError``, for a malformed one). ValueError for a
    number Go cannot hold. A duplicate key keeps its last value, unreported (divergence D193)."""
    if raw.lstrip()[:1] in (b"{", b"[") and _NOT_FOR_ORJSON.search(raw) is None:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return deepjson.loads(raw, _finite_float)


def parse_json(raw: bytes) -> Any:
    """A JSON body (``_json``); 400 when malformed."""
    try:
        return _json(raw)
    except ValueError as e:
        raise errors.bad_request(
            f"the body of the request could not be decoded as JSON: {e}"
        ) from e


def yaml_value(raw: bytes) -> Any:
    """A YAML body as kube-apiserver reads it (``yamlbody``). JSON text, what clients send even
    as YAML, takes the JSON decoder: the same value go-yaml reads, sooner, and to go-yaml's
    10,000 levels (beyond them, its ``exceeded max depth of 10000``). ``YAMLBodyError``, or
    ``deepjson.JSONSyntaxError`` for a value nested deeper than JSON is read."""
    if raw.lstrip()[:1] in (b"{", b"["):
        try:
            return _json(raw)
        except deepjson.TooDeep as e:
            line = raw.count(b"\n", 0, e.offset)  # go-yaml names a line after the first
            where = f"line {line + 1}: " if line else ""
            raise yamlbody.YAMLBodyError(
                f"yaml: {where}exceeded max depth of {deepjson.MAX_DEPTH}"
            ) from e
        except ValueError:
            pass  # YAML reads more than JSON does: flow mappings, unquoted keys, big floats
    return yamlbody.load(raw)


def _summary(body: bytes, limit: int = 30) -> str:
    """How kube-apiserver quotes a body it cannot decode: its first bytes, as text when it is
    a JSON object and in hex otherwise."""
    if not body:
        return "<empty>"
    more = " ..." if len(body) > limit else ""
    if body[:1] == b"{":
        return body[:limit].decode("utf-8", "replace") + more
    return body[:limit].hex() + more


def _unrecognized(kind: str, why: str, body: bytes) -> errors.StatusError:
    """kube-apiserver's 400 for a body its serializer cannot even read the kind of."""
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): {why} ({_summary(body)})"
    )


BODY_TYPES = ("application/json", "application/yaml", protobuf.CONTENT_TYPE)
CUSTOM_BODY_TYPES = ("application/json", "application/yaml")


def object_body(req: Request, kind: str, custom: bool = False) -> Any:
    """The ``kind`` object in a POST/PUT body by Content-Type (none means JSON); 415 for any
    other type (custom resources take no protobuf). A body that does not decode gets
    kube-apiserver's 400: its serializer fails before it reads the kind, so the message is
    ``the object provided is unrecognized`` with the decoder's reason."""
    ctype = req.header("content-type").split(";")[0].strip().lower() or "application/json"
    accepted = CUSTOM_BODY_TYPES if custom else BODY_TYPES
    if ctype not in accepted:
        raise errors.unknown_body_format(accepted)
    if not req.body and ctype == "application/json":
        why = "couldn't get version/kind; json parse error: unexpected end of JSON input"
        raise _unrecognized(kind, why, req.body)
    if not req.body:
        raise errors.bad_request("the request body is empty")
    if ctype == protobuf.CONTENT_TYPE:
        try:
            return protobuf.decode(req.body, kind)
        except protobuf.UndecodableObject as e:
            version = e.api_version.rpartition("/")[2]
            raise errors.bad_request(
                f"{e.kind} in version {orjson.dumps(version).decode()} cannot be handled as a "
                f"{kind}: {e}"
            ) from e
        except protobuf.ProtobufError as e:
            raise _unrecognized(kind, str(e), req.body) from e
    try:
        if ctype == "application/yaml":
            value = yaml_value(req.body)
        else:
            value = _json(req.body)
    except deepjson.JSONSyntaxError as e:
        why = f"couldn't get version/kind; json parse error: {e}"
        raise _unrecognized(kind, why, req.body) from e
    except yamlbody.YAMLBodyError as e:
        raise _unrecognized(kind, str(e), req.body) from e
    except ValueError as e:
        raise errors.bad_request(
            f"the body of the request could not be decoded as JSON: {e}"
        ) from e
    if ctype != "application/yaml" and isinstance(value, (list, str, bool, int, float)):
        # the serializer reads apiVersion and kind into a struct first
        why = (
            f"couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{_go_json_type(value)} into Go value of type {_TYPE_META_STRUCT}"
        )
        raise _unrecognized(kind, why, req.body)
    if custom and isinstance(value, dict) and not value.get("kind"):
        # a custom resource is read as unstructured JSON, which must name its kind (a
        # built-in type's kind defaults from the URL)
        text = req.body if ctype != "application/yaml" else orjson.dumps(value)
        why = f"Object 'Kind' is missing in '{text.decode('utf-8', 'replace')}'"
        raise _unrecognized(kind, why, req.body)
    return value


def _go_json_type(value: Any, mapping: str = "") -> str:
    """The JSON type Go's decoder names in ``cannot unmarshal <type> into ...``."""
    if isinstance(value, dict):
        return mapping or "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    return "bool" if isinstance(value, bool) else "number"


_TYPE_META_STRUCT = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)


def patch_body(req: Request, custom: bool = False) -> tuple[str, Any]:
    """``(patch type, parsed patch)`` by Content-Type (parameters such as ``charset`` dropped);
    415 for a type the resource does not take. An apply patch is YAML, refused as
    kube-apiserver's apply handler refuses it (``error decoding YAML: ...``)."""
    ctype = req.header("content-type").split(";")[0].strip()
    accepted = patches.accepted_content_types(custom)
    if ctype not in accepted:
        if not custom and ctype not in patches.CONTENT_TYPES:
            # the built-in handlers' generic answer (a custom resource's names what it takes)
            raise errors.StatusError(415, "UnsupportedMediaType", "415: Unsupported Media Type", {})
        raise errors.unknown_body_format(accepted)
    patch_type = patches.CONTENT_TYPES[ctype]
    if patch_type != "apply":
        try:
            patch = _json(req.body)
        except ValueError as e:
            raise errors.bad_request("invalid JSON patch") from e
        _check_patch_shape(patch_type, patch)
        return patch_type, patch
    try:
        return patch_type, yaml_value(req.body)
    except yamlbody.YAMLBodyError as e:
        raise errors.bad_request(f"error decoding YAML: error converting YAML to JSON: {e}") from e
    except deepjson.JSONSyntaxError as e:
        raise errors.bad_request(
            f"error decoding YAML: error unmarshaling JSON: while decoding JSON: {e}"
        ) from e


def _check_patch_shape(patch_type: str, patch: Any) -> None:
    """400 as kube-apiserver's patch handlers decode a patch: a JSON patch into a list of
    operation structs, a merge or strategic merge patch into a map."""
    if patch is None:
        return
    if patch_type == "json":
        if not isinstance(patch, list):
            raise errors.bad_request(
                f"error decoding patch: json: cannot unmarshal {_go_json_type(patch, 'object')} "
                "into Go value of type []handlers.jsonPatchOp"
            )
        for op in patch:
            if op is not None and not isinstance(op, dict):
                raise errors.bad_request(
                    f"error decoding patch: json: cannot unmarshal {_go_json_type(op)} "
                    "into Go value of type handlers.jsonPatchOp"
                )
    elif not isinstance(patch, dict):
        why = f"json: cannot unmarshal {_go_json_type(patch)} into Go value of type map[string]interface {{}}"
        raise errors.bad_request(
            why if patch_type == "strategic" else f"error decoding patch: {why}"
        )


def dry_run(req: Request) -> bool:
    value = req.query.get("dryRun")
    if value and value != "All":
        raise errors.bad_request(f'Invalid value: "{value}": supported values: "All"')
    return value == "All"


def delete_options(req: Request) -> dict[str, Any]:
    """``grace``, ``propagation``, ``preconditions`` and ``dry_run`` from the body or the query."""
    body: dict[str, Any] = {}
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
