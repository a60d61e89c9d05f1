"""Decoding of Kubernetes protobuf request bodies for the few kinds kubectl sends that way.

``kubectl create namespace|configmap|secret|serviceaccount|role|rolebinding|clusterrole|
clusterrolebinding|deployment|job|service|poddisruptionbudget|priorityclass|token`` and
``kubectl auth can-i|whoami`` POST
``application/vnd.kubernetes.protobuf`` bodies (the ``k8s\\0`` magic,
then a ``runtime.Unknown`` envelope holding the typed message). Replies are always JSON, which
kubectl accepts. Each supported kind is described by a small field-number table taken from the
public API's ``generated.proto`` layout; unknown field numbers are skipped, and a kind without a
table gets 415 so the caller knows to send JSON or YAML instead.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from . import errors

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


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield (field number, wire type, value) over one message."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        num, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + n], pos + n
            if pos > len(buf):
                raise ValueError("truncated field")
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield num, wire, value


def _message(buf: bytes) -> dict[int, Any]:
    """A message's fields by number (the last one wins, as for a non-repeated field)."""
    return {num: value for num, _, value in _fields(buf)}


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _scalar(kind: str, value: Any) -> Any:
    if kind == "s":
        return value.decode("utf-8")
    if kind == "b":
        return base64.b64encode(value).decode()
    if kind in ("i", "i0"):
        return _signed(value)
    if kind in ("?", "?0"):
        return bool(value)
    if kind == "ios":  # intstr.IntOrString: type 0 -> intVal, 1 -> strVal
        parts = _message(value)
        return parts.get(3, b"").decode("utf-8") if parts.get(1) == 1 else _signed(parts.get(2, 0))
    if kind == "t":
        secs = _signed(_message(value).get(1, 0))
        if not secs:
            return None
        return datetime.fromtimestamp(secs, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    raise ValueError(f"unknown scalar kind {kind}")


def _map_entry(kind: str, entry_bytes: bytes) -> tuple[str, str]:
    entry = _message(entry_bytes)
    key = entry.get(1, b"").decode("utf-8")
    raw = entry.get(2, b"")
    if kind == "msb":
        return key, base64.b64encode(raw).decode()
    if kind == "msq":  # resource.Quantity is a message holding its string form
        raw = _message(raw).get(1, b"")
    return key, raw.decode("utf-8")


def _length_delimited(value: int | bytes) -> bytes:
    """A nested message's bytes; a varint where a message belongs fails as it always did
    (a TypeError, which the server answers with a 500)."""
    if isinstance(value, int):
        raise TypeError("a varint where a length-delimited field belongs")
    return value


def decode_message(buf: bytes, schema: Schema) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for num, _, value in _fields(buf):
        spec = schema.get(num)
        if spec is None:
            continue
        name, kind, repeated = spec
        if kind in ("mss", "msb", "msq"):
            out.setdefault(name, {}).update([_map_entry(kind, _length_delimited(value))])
            continue
        item: Any
        if isinstance(kind, dict):
            item = decode_message(_length_delimited(value), kind)
        else:
            item = _scalar(kind, value)
        if repeated:
            out.setdefault(name, []).append(item)
        elif item in (None, "") or (kind in ("i0", "?0") and not item):
            continue
        else:
            out[name] = item
    return out


def decode(body: bytes) -> dict[str, Any]:
    """Decode a ``k8s\\0``-framed protobuf object into its JSON form; 415/400 when we cannot."""
    if not body.startswith(MAGIC):
        raise errors.bad_request("protobuf body without the k8s magic prefix")
    try:
        envelope = _message(body[len(MAGIC) :])
        type_meta = {n: v.decode() for n, v in _message(envelope.get(1, b"")).items()}
        api_version, kind = type_meta.get(1, ""), type_meta.get(2, "")
        schema = KINDS.get(kind)
        if schema is None:
            raise errors.unsupported_media_type(
                f"{CONTENT_TYPE} bodies are not supported for kind {kind!r} by this server; "
                "send application/json or application/yaml"
            )
        obj = decode_message(envelope.get(2, b""), schema)
    except (ValueError, UnicodeDecodeError) as e:
        raise errors.bad_request(
            f"the body of the request could not be decoded as protobuf: {e}"
        ) from e
    return {"apiVersion": api_version, "kind": kind, **obj}
