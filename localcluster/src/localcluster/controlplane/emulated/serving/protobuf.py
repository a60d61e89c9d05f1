"""Decoding of Kubernetes protobuf request bodies for the few kinds kubectl sends that way.

``kubectl create namespace|configmap|secret|serviceaccount|role|rolebinding|clusterrole|
clusterrolebinding|deployment|job|service|poddisruptionbudget|priorityclass|token`` and
``kubectl auth can-i|whoami`` POST
``application/vnd.kubernetes.protobuf`` bodies (the ``k8s\\0`` magic,
then a ``runtime.Unknown`` envelope holding the typed message). Replies are always JSON, which
kubectl accepts. Each supported kind is described by a small field-number table taken from the
public API's ``generated.proto`` layout; unknown field numbers are skipped, and a kind without a
table gets 415 so the caller knows to send JSON or YAML instead.

A malformed body (a truncated varint or length, a length past the end, a wire type a field
does not take, a bad tag or group) is refused as the Go code kube-apiserver runs refuses it
(``ProtobufError`` with its message, which the server answers with its 400); varints are read
to 64 bits and ten bytes, as there, so no body costs more than one pass over it. Go's messages
name the Go type being read; a nested message is named here after its field (D78).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from localcluster.apimachinery import errors

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"

# field number -> (json name, type, repeated). Types: "s" string, "b" bytes (base64 in JSON),
# "i" integer, "i0" integer omitted when zero, "?" bool, "?0" bool omitted when false,
# "ios" IntOrString, "t" metav1.Time, "mss" map<string,string>, "msb" map<string,bytes>,
# "msq" map<string,Quantity>, or a nested table.
Schema = dict[int, tuple[str, Any, bool]]

OWNER_REFERENCE: Schema = {
    1: ("kind", "s", False),
    3: ("name", "s", False),
    4: ("uid", "s", False),
    5: ("apiVersion", "s", False),
    6: ("controller", "?", False),
    7: ("blockOwnerDeletion", "?", False),
}
OBJECT_META: Schema = {
    1: ("name", "s", False),
    2: ("generateName", "s", False),
    3: ("namespace", "s", False),
    5: ("uid", "s", False),
    6: ("resourceVersion", "s", False),
    7: ("generation", "i0", False),
    8: ("creationTimestamp", "t", False),
    11: ("labels", "mss", False),
    12: ("annotations", "mss", False),
    13: ("ownerReferences", OWNER_REFERENCE, True),
    14: ("finalizers", "s", True),
}
OBJECT_REFERENCE: Schema = {
    1: ("kind", "s", False),
    2: ("namespace", "s", False),
    3: ("name", "s", False),
    4: ("uid", "s", False),
    5: ("apiVersion", "s", False),
    6: ("resourceVersion", "s", False),
    7: ("fieldPath", "s", False),
}
POLICY_RULE: Schema = {
    1: ("verbs", "s", True),
    2: ("apiGroups", "s", True),
    3: ("resources", "s", True),
    4: ("resourceNames", "s", True),
    5: ("nonResourceURLs", "s", True),
}
SUBJECT: Schema = {
    1: ("kind", "s", False),
    2: ("apiGroup", "s", False),
    3: ("name", "s", False),
    4: ("namespace", "s", False),
}
ROLE_REF: Schema = {1: ("apiGroup", "s", False), 2: ("kind", "s", False), 3: ("name", "s", False)}
LABEL_SELECTOR: Schema = {1: ("matchLabels", "mss", False)}


def _object(fields: Schema) -> Schema:
    """A top-level kind: ``metadata`` at field 1, then its own ``fields``."""
    return {1: ("metadata", OBJECT_META, False), **fields}


_BINDING = _object({2: ("subjects", SUBJECT, True), 3: ("roleRef", ROLE_REF, False)})
_ROLE = _object({2: ("rules", POLICY_RULE, True)})


CONTAINER_PORT: Schema = {
    1: ("name", "s", False),
    2: ("hostPort", "i0", False),
    3: ("containerPort", "i0", False),
    4: ("protocol", "s", False),
    5: ("hostIP", "s", False),
}
CONTAINER: Schema = {
    1: ("name", "s", False),
    2: ("image", "s", False),
    3: ("command", "s", True),
    4: ("args", "s", True),
    5: ("workingDir", "s", False),
    6: ("ports", CONTAINER_PORT, True),
    7: ("env", {1: ("name", "s", False), 2: ("value", "s", False)}, True),
    8: ("resources", {1: ("limits", "msq", False), 2: ("requests", "msq", False)}, False),
    13: ("terminationMessagePath", "s", False),
    14: ("imagePullPolicy", "s", False),
    16: ("stdin", "?0", False),
    17: ("stdinOnce", "?0", False),
    18: ("tty", "?0", False),
    20: ("terminationMessagePolicy", "s", False),
}
POD_SPEC: Schema = {
    2: ("containers", CONTAINER, True),
    3: ("restartPolicy", "s", False),
    4: ("terminationGracePeriodSeconds", "i", False),
    5: ("activeDeadlineSeconds", "i", False),
    6: ("dnsPolicy", "s", False),
    7: ("nodeSelector", "mss", False),
    8: ("serviceAccountName", "s", False),
    10: ("nodeName", "s", False),
    11: ("hostNetwork", "?0", False),
    15: ("imagePullSecrets", {1: ("name", "s", False)}, True),
    16: ("hostname", "s", False),
    17: ("subdomain", "s", False),
    19: ("schedulerName", "s", False),
    20: ("initContainers", CONTAINER, True),
    24: ("priorityClassName", "s", False),
}
POD_TEMPLATE: Schema = {1: ("metadata", OBJECT_META, False), 2: ("spec", POD_SPEC, False)}
DEPLOYMENT_SPEC: Schema = {
    1: ("replicas", "i", False),
    2: ("selector", LABEL_SELECTOR, False),
    3: ("template", POD_TEMPLATE, False),
    4: ("strategy", {1: ("type", "s", False)}, False),
    5: ("minReadySeconds", "i0", False),
    6: ("revisionHistoryLimit", "i", False),
    7: ("paused", "?0", False),
    9: ("progressDeadlineSeconds", "i", False),
}
JOB_SPEC: Schema = {
    1: ("parallelism", "i", False),
    2: ("completions", "i", False),
    3: ("activeDeadlineSeconds", "i", False),
    4: ("selector", LABEL_SELECTOR, False),
    5: ("manualSelector", "?", False),
    6: ("template", POD_TEMPLATE, False),
    7: ("backoffLimit", "i", False),
}
SERVICE_PORT: Schema = {
    1: ("name", "s", False),
    2: ("protocol", "s", False),
    3: ("port", "i0", False),
    4: ("targetPort", "ios", False),
    5: ("nodePort", "i0", False),
}
SERVICE_SPEC: Schema = {
    1: ("ports", SERVICE_PORT, True),
    2: ("selector", "mss", False),
    3: ("clusterIP", "s", False),
    4: ("type", "s", False),
    5: ("externalIPs", "s", True),
    7: ("sessionAffinity", "s", False),
    10: ("externalName", "s", False),
}
PDB_SPEC: Schema = {
    1: ("minAvailable", "ios", False),
    2: ("selector", LABEL_SELECTOR, False),
    3: ("maxUnavailable", "ios", False),
}

RESOURCE_ATTRIBUTES: Schema = {
    1: ("namespace", "s", False),
    2: ("verb", "s", False),
    3: ("group", "s", False),
    4: ("version", "s", False),
    5: ("resource", "s", False),
    6: ("subresource", "s", False),
    7: ("name", "s", False),
}
NON_RESOURCE_ATTRIBUTES: Schema = {1: ("path", "s", False), 2: ("verb", "s", False)}
ACCESS_REVIEW_SPEC: Schema = {
    1: ("resourceAttributes", RESOURCE_ATTRIBUTES, False),
    2: ("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES, False),
    3: ("user", "s", False),
    4: ("groups", "s", True),
    6: ("uid", "s", False),
}
TOKEN_REQUEST_SPEC: Schema = {
    1: ("audiences", "s", True),
    3: (
        "boundObjectRef",
        {
            1: ("kind", "s", False),
            2: ("apiVersion", "s", False),
            3: ("name", "s", False),
            4: ("uid", "s", False),
        },
        False,
    ),
    4: ("expirationSeconds", "i", False),
}

KINDS: dict[str, Schema] = {
    "SelfSubjectAccessReview": _object({2: ("spec", ACCESS_REVIEW_SPEC, False)}),
    "SubjectAccessReview": _object({2: ("spec", ACCESS_REVIEW_SPEC, False)}),
    "LocalSubjectAccessReview": _object({2: ("spec", ACCESS_REVIEW_SPEC, False)}),
    "SelfSubjectRulesReview": _object({2: ("spec", {1: ("namespace", "s", False)}, False)}),
    "SelfSubjectReview": _object({}),
    "TokenReview": _object(
        {2: ("spec", {1: ("token", "s", False), 2: ("audiences", "s", True)}, False)}
    ),
    "TokenRequest": _object({2: ("spec", TOKEN_REQUEST_SPEC, False)}),
    "Deployment": _object({2: ("spec", DEPLOYMENT_SPEC, False)}),
    "Job": _object({2: ("spec", JOB_SPEC, False)}),
    "Service": _object({2: ("spec", SERVICE_SPEC, False)}),
    "PodDisruptionBudget": _object({2: ("spec", PDB_SPEC, False)}),
    "PriorityClass": _object(
        {
            2: ("value", "i0", False),
            3: ("globalDefault", "?0", False),
            4: ("description", "s", False),
        }
    ),
    "Namespace": _object(
        {
            2: ("spec", {1: ("finalizers", "s", True)}, False),
            3: ("status", {1: ("phase", "s", False)}, False),
        }
    ),
    "ConfigMap": _object(
        {
            2: ("data", "mss", False),
            3: ("binaryData", "msb", False),
            4: ("immutable", "?", False),
        }
    ),
    "Secret": _object(
        {
            2: ("data", "msb", False),
            3: ("type", "s", False),
            4: ("stringData", "mss", False),
            5: ("immutable", "?", False),
        }
    ),
    "ServiceAccount": _object(
        {
            2: ("secrets", OBJECT_REFERENCE, True),
            3: ("imagePullSecrets", {1: ("name", "s", False)}, True),
            4: ("automountServiceAccountToken", "?", False),
        }
    ),
    "Role": _ROLE,
    "ClusterRole": _ROLE,
    "RoleBinding": _BINDING,
    "ClusterRoleBinding": _BINDING,
}


_U64 = (1 << 64) - 1
_VARINT, _FIXED64, _BYTES, _GROUP_START, _GROUP_END, _FIXED32 = range(6)
# field number -> (Go field name, wire type)
Layout = dict[int, tuple[str, int]]
_UNKNOWN: Layout = {
    1: ("TypeMeta", _BYTES),
    2: ("Raw", _BYTES),
    3: ("ContentEncoding", _BYTES),
    4: ("ContentType", _BYTES),
}
_TYPE_META: Layout = {1: ("APIVersion", _BYTES), 2: ("Kind", _BYTES)}
_MAP_ENTRY: Layout = {1: ("key", _BYTES), 2: ("value", _BYTES)}
_QUANTITY: Layout = {1: ("String_", _BYTES)}
_INT_OR_STRING: Layout = {1: ("Type", _VARINT), 2: ("IntVal", _VARINT), 3: ("StrVal", _BYTES)}
_TIMESTAMP: Layout = {1: ("Seconds", _VARINT), 2: ("Nanos", _VARINT)}
_VARINT_KINDS = {"i", "i0", "?", "?0"}


class ProtobufError(ValueError):
    """A body Go's generated protobuf code refuses; ``str(err)`` is its message."""


class UndecodableObject(ProtobufError):
    """The envelope was read but the object in it was not: kube-apiserver's 400 then names
    the ``api_version`` and ``kind`` it found."""

    def __init__(self, api_version: str, kind: str, why: str) -> None:
        super().__init__(why)
        self.api_version = api_version
        self.kind = kind


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A varint at ``pos`` and where it ends, read as Go's generated code reads one: ten bytes
    at most, kept to 64 bits."""
    result = shift = 0
    while True:
        if shift >= 64:
            raise ProtobufError("proto: integer overflow")
        if pos >= len(buf):
            raise ProtobufError("unexpected EOF")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & _U64, pos
        shift += 7


def _length_delimited(buf: bytes, pos: int) -> tuple[int, int]:
    """Where the bytes of a length-delimited value at ``pos`` start and end."""
    n, pos = _varint(buf, pos)
    if n >= 1 << 63:  # negative as Go's int
        raise ProtobufError("proto: negative length found during unmarshal")
    if pos + n > len(buf):
        raise ProtobufError("unexpected EOF")
    return pos, pos + n


def _skip(buf: bytes, pos: int, wire: int) -> int:
    """Where the value of an unknown field (its key read) ends: groups are skipped whole."""
    depth = 0
    while True:
        if wire == _VARINT:
            pos = _varint(buf, pos)[1]
        elif wire == _BYTES:
            pos = _length_delimited(buf, pos)[1]
        elif wire in (_FIXED64, _FIXED32):
            pos += 8 if wire == _FIXED64 else 4
        elif wire == _GROUP_START:
            depth += 1
        elif wire == _GROUP_END:  # never the first: the caller refuses a field that is one
            depth -= 1
        else:
            raise ProtobufError(f"proto: illegal wireType {wire}")
        if pos > len(buf) or (depth and pos == len(buf)):
            raise ProtobufError("unexpected EOF")
        if not depth:
            return pos
        key, pos = _varint(buf, pos)
        wire = key & 7


def _fields(buf: bytes, name: str, layout: Layout) -> Iterator[tuple[int, int | bytes]]:
    """``(field number, value)`` for each field of message ``name`` that ``layout`` knows
    (an integer for a varint, bytes for a length-delimited value); other fields are skipped.
    Checked as Go's generated code checks them, with its messages."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        wire = key & 7
        num = (key >> 3) & 0xFFFFFFFF  # Go's int32(key >> 3)
        num = num - (1 << 32) if num >= 1 << 31 else num
        if wire == _GROUP_END:
            raise ProtobufError(f"proto: {name}: wiretype end group for non-group")
        if num <= 0:
            raise ProtobufError(f"proto: {name}: illegal tag {num} (wire type {key})")
        known = layout.get(num)
        if known is None:
            pos = _skip(buf, pos, wire)
            continue
        field, expected = known
        if wire != expected:
            raise ProtobufError(f"proto: wrong wireType = {wire} for field {field}")
        value: int | bytes
        if wire == _VARINT:
            value, pos = _varint(buf, pos)
        else:
            start, pos = _length_delimited(buf, pos)
            value = buf[start:pos]
        yield num, value


def _message(buf: bytes, name: str, layout: Layout) -> dict[int, Any]:
    """A message's known fields by number (the last one wins, as for a non-repeated field)."""
    return dict(_fields(buf, name, layout))


def _go_name(json_name: str) -> str:
    """The Go field a JSON field decodes into, as the API types name them."""
    if json_name in ("metadata", "uid"):
        return {"metadata": "ObjectMeta", "uid": "UID"}[json_name]
    if json_name.startswith("api"):
        return "API" + json_name[3:]
    return json_name[:1].upper() + json_name[1:]


def _layout(schema: Schema) -> Layout:
    return {
        num: (
            _go_name(name),
            _VARINT if isinstance(kind, str) and kind in _VARINT_KINDS else _BYTES,
        )
        for num, (name, kind, _) in schema.items()
    }


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _text(value: bytes) -> str:
    """A proto2 string: Go keeps its bytes unchecked and writes invalid UTF-8 to JSON as
    U+FFFD, which is what a reply shows."""
    return value.decode("utf-8", "replace")


def _scalar(kind: str, value: Any) -> Any:
    if kind == "s":
        return _text(value)
    if kind == "b":
        return base64.b64encode(value).decode()
    if kind in ("i", "i0"):
        return _signed(value)
    if kind in ("?", "?0"):
        return bool(value)
    if kind == "ios":  # intstr.IntOrString: type 0 -> intVal, 1 -> strVal
        parts = _message(value, "IntOrString", _INT_OR_STRING)
        if parts.get(1) == 1:
            return _text(parts.get(3, b""))
        return _signed(parts.get(2, 0))
    if kind == "t":
        secs = _signed(_message(value, "Timestamp", _TIMESTAMP).get(1, 0))
        if not secs:
            return None
        try:
            return datetime.fromtimestamp(secs, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, OSError, ValueError):
            return None  # beyond year 9999: the server sets creationTimestamp on create
    raise ValueError(f"unknown scalar kind {kind}")


def _map_entry(kind: str, entry_bytes: bytes) -> tuple[str, str]:
    entry = _message(entry_bytes, "MapEntry", _MAP_ENTRY)
    key = _text(entry.get(1, b""))
    raw = entry.get(2, b"")
    if kind == "msb":
        return key, base64.b64encode(raw).decode()
    if kind == "msq":  # resource.Quantity is a message holding its string form
        raw = _message(raw, "Quantity", _QUANTITY).get(1, b"")
    return key, _text(raw)


def decode_message(buf: bytes, schema: Schema, name: str) -> dict[str, Any]:
    """Message ``name`` (a nested message is named by its field) as JSON; ``ProtobufError``."""
    out: dict[str, Any] = {}
    for num, value in _fields(buf, name, _layout(schema)):
        field, kind, repeated = schema[num]
        if kind in ("mss", "msb", "msq"):
            assert isinstance(value, bytes)
            out.setdefault(field, {}).update([_map_entry(kind, value)])
            continue
        item: Any
        if isinstance(kind, dict):
            assert isinstance(value, bytes)
            item = decode_message(value, kind, _go_name(field))
        else:
            item = _scalar(kind, value)
        if repeated:
            out.setdefault(field, []).append(item)
        elif item in (None, "") or (kind in ("i0", "?0") and not item):
            continue
        else:
            out[field] = item
    return out


def decode(body: bytes, expected_kind: str) -> dict[str, Any]:
    """The JSON form of a ``k8s\\0``-framed protobuf object POSTed where ``expected_kind``
    belongs (the kind an envelope leaves out, as kube-apiserver defaults it). 415 for a kind
    without a table; ``ProtobufError`` for a body the envelope cannot be read from,
    ``UndecodableObject`` for an object that cannot, with kube-apiserver's reasons."""
    if not body.startswith(MAGIC):
        prefix = " ".join(str(b) for b in MAGIC)
        raise ProtobufError(
            f"provided data does not appear to be a protobuf message, expected prefix [{prefix}]"
        )
    if len(body) == len(MAGIC):
        raise ProtobufError("empty body")
    envelope = _message(body[len(MAGIC) :], "Unknown", _UNKNOWN)
    type_meta = _message(envelope.get(1, b""), "TypeMeta", _TYPE_META)
    api_version = _text(type_meta.get(1, b""))
    kind = _text(type_meta.get(2, b"")) or expected_kind
    schema = KINDS.get(kind)
    if schema is None:
        raise errors.unsupported_media_type(
            f"{CONTENT_TYPE} bodies are not supported for kind {kind!r} by this server; "
            "send application/json or application/yaml"
        )
    try:
        obj = decode_message(envelope.get(2, b""), schema, kind)
    except ProtobufError as e:
        raise UndecodableObject(api_version, kind, str(e)) from e
    return {"apiVersion": api_version, "kind": kind, **obj}
