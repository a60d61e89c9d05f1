"""What the real API server's typed decoding does to a body: refuse it, or canonicalise it.

kube-apiserver decodes a request body into Go structs before any validation runs, so a field
of the wrong JSON type, or a quantity that does not parse, is rejected as a whole with
``<Kind> in version "<v>" cannot be handled as a <Kind>: <decoder error>`` (400), not with a
422 cause; and what it stores is encoded from those structs, so every quantity comes back in
canonical form. We store plain JSON, so ``decode`` replays both for the fields that matter to
our clients and our controllers: object metadata, node selectors, tolerations and containers
(their resources and ports; in pods and in the pod templates of workload kinds), service ports,
ConfigMap and Secret
data (base64 where Go holds bytes), and every quantity field of a built-in kind
(``quantityfields``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from localcluster.apimachinery import errors, gobase64, quantity
from localcluster.controlplane.emulated.admission import quantityfields
from localcluster.controlplane.emulated.resources import ResourceType

# kinds whose pod spec sits at spec.template.spec
_TEMPLATE_KINDS = {
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
}
_STRING_FIELDS = ("name", "generateName", "namespace", "resourceVersion", "uid")
_STRINGS, _BYTES = "map[string]string", "map[string][]uint8"
# top-level fields by kind: (JSON name, Go type as decoder errors name it)
_TOP_LEVEL_FIELDS: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {
    ("", "configmaps"): (("data", _STRINGS), ("binaryData", _BYTES), ("immutable", "bool")),
    ("", "secrets"): (
        ("data", _BYTES),
        ("stringData", _STRINGS),
        ("type", "v1.SecretType"),
        ("immutable", "bool"),
    ),
}


class DecodeError(ValueError):
    """A body the Go decoder would not accept; the text is the decoder's."""


def decode(rt: ResourceType, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` as the API server would store it after decoding it into ``rt``'s Go type (its
    quantities canonical; the caller's object is left as it was); 400 BadRequest when it would
    not decode. Top-level and metadata nulls are gone already (``objects.strip_nulls``: Go
    decodes them into omitempty zero values, stored as left out)."""
    try:
        _check_metadata(obj.get("metadata") or {})
        for path, spec in pod_specs(rt, obj):
            _check_pod_spec(spec, path)
        if rt.storage_key == ("", "services") and isinstance(obj.get("spec"), dict):
            _check_service_spec(obj["spec"])
        for name, go_type in _TOP_LEVEL_FIELDS.get(rt.storage_key, ()):
            if name in obj:
                _check_field(obj[name], f"{rt.kind}.{name}", go_type)
        if rt.is_custom:
            return obj
        return cast(
            dict[str, Any],
            quantityfields.rewrite(obj, quantityfields.tree(rt.storage_key), _canonical_field),
        )
    except DecodeError as e:
        raise errors.bad_request(
            f'{rt.kind} in version "{version}" cannot be handled as a {rt.kind}: {e}'
        ) from e


def check_type_meta(rt: ResourceType, version: str, obj: dict[str, Any]) -> None:
    """400 when ``apiVersion`` or ``kind`` is no string: the serializer reads them first."""
    for field in ("apiVersion", "kind"):
        value = obj.get(field)
        if value is not None and not isinstance(value, str):
            raise errors.bad_request(
                f'{rt.kind} in version "{version}" cannot be handled as a {rt.kind}: '
                "couldn't get version/kind; json parse error: "
                f"{_unmarshal(value, '.' + field, 'string')}"
            )


def pod_specs(rt: ResourceType, obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(field path, pod spec)`` for a pod or a workload's pod template."""
    spec = obj.get("spec")
    if not isinstance(spec, dict) or rt.is_custom:
        return
    if rt.storage_key == ("", "pods"):
        yield "spec", spec
    elif rt.storage_key in _TEMPLATE_KINDS:
        template = spec.get("template")
        inner = template.get("spec") if isinstance(template, dict) else None
        if isinstance(inner, dict):
            yield "spec.template.spec", inner


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), "value")


def _unmarshal(value: Any, go_field: str, go_type: str) -> DecodeError:
    return DecodeError(
        f"json: cannot unmarshal {_json_type(value)} into Go struct field {go_field} of type {go_type}"
    )


def _check_string_map(value: Any, go_field: str, go_type: str = _STRINGS) -> None:
    if not isinstance(value, dict):
        raise _unmarshal(value, go_field, go_type)
    for item in value.values():
        if not isinstance(item, str):
            raise _unmarshal(item, go_field, "string" if go_type == _STRINGS else "[]uint8")


def _check_field(value: Any, go_field: str, go_type: str) -> None:
    if go_type in (_STRINGS, _BYTES):
        _check_string_map(value, go_field, go_type)
        if go_type == _BYTES:
            for item in value.values():
                _check_base64(item)
    elif not isinstance(value, bool if go_type == "bool" else str):
        raise _unmarshal(value, go_field, go_type)


def _check_base64(text: str) -> None:
    """A []byte is standard base64 with padding to Go's decoder."""
    at = gobase64.corrupt_at(text)
    if at is not None:
        raise DecodeError(str(gobase64.CorruptInput(at)))


def _check_metadata(m: dict[str, Any]) -> None:
    for name in _STRING_FIELDS:
        if name in m and not isinstance(m[name], str):
            raise _unmarshal(m[name], f"ObjectMeta.metadata.{name}", "string")
    for name in ("labels", "annotations"):
        if name in m:
            _check_string_map(m[name], f"ObjectMeta.metadata.{name}")
    finalizers = m.get("finalizers", [])
    if not isinstance(finalizers, list):
        raise _unmarshal(finalizers, "ObjectMeta.metadata.finalizers", "[]string")
    for finalizer in finalizers:
        if not isinstance(finalizer, str):
            raise _unmarshal(finalizer, "ObjectMeta.metadata.finalizers", "string")
    _objects(m.get("ownerReferences"), "ObjectMeta.metadata.ownerReferences", "v1.OwnerReference")


def _check_pod_spec(spec: dict[str, Any], path: str) -> None:
    if spec.get("nodeSelector") is not None:
        _check_string_map(spec["nodeSelector"], f"PodSpec.{path}.nodeSelector")
    for kind in ("initContainers", "containers"):
        for container in _objects(spec.get(kind), f"PodSpec.{path}.{kind}", "v1.Container"):
            resources = container.get("resources")
            if resources is not None and not isinstance(resources, dict):
                raise _unmarshal(
                    resources, f"Container.{path}.{kind}.resources", "v1.ResourceRequirements"
                )
            for port in _objects(
                container.get("ports"), f"Container.{path}.{kind}.ports", "v1.ContainerPort"
            ):
                for field in ("containerPort", "hostPort"):
                    _check_int(port.get(field), f"ContainerPort.{path}.{kind}.ports.{field}", 32)
                for field in ("name", "protocol", "hostIP"):
                    _check_optional_string(
                        port.get(field), f"ContainerPort.{path}.{kind}.ports.{field}"
                    )
    for toleration in _objects(
        spec.get("tolerations"), f"PodSpec.{path}.tolerations", "v1.Toleration"
    ):
        for field in ("key", "operator", "value", "effect"):
            _check_optional_string(toleration.get(field), f"Toleration.{path}.tolerations.{field}")
        _check_int(
            toleration.get("tolerationSeconds"),
            f"Toleration.{path}.tolerations.tolerationSeconds",
            64,
        )


def _check_service_spec(spec: dict[str, Any]) -> None:
    for port in _objects(spec.get("ports"), "ServiceSpec.spec.ports", "v1.ServicePort"):
        for field in ("port", "nodePort"):
            _check_int(port.get(field), f"ServicePort.spec.ports.{field}", 32)
        for field in ("name", "protocol", "appProtocol"):
            _check_optional_string(port.get(field), f"ServicePort.spec.ports.{field}")
        target = port.get("targetPort")
        if target is not None and not isinstance(target, str):  # an IntOrString
            _check_int(target, "ServicePort.spec.ports.targetPort", 32, go_value=True)


def _check_optional_string(value: Any, go_field: str) -> None:
    if value is not None and not isinstance(value, str):
        raise _unmarshal(value, go_field, "string")


def _check_int(value: Any, go_field: str, bits: int, go_value: bool = False) -> None:
    """An int32/int64 field: a JSON number that is an integer in range (Go's decoder refuses
    ``2222.5``, ``70000000000`` for an int32, ``"2222"`` and ``true``)."""
    if value is None:
        return
    go_type = f"int{bits}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if go_value:
            raise DecodeError(
                f"json: cannot unmarshal {_json_type(value)} into Go value of type {go_type}"
            )
        raise _unmarshal(value, go_field, go_type)
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if isinstance(value, float) or not low <= value <= high:
        number = getattr(value, "literal", None) or repr(value)
        where = "Go value" if go_value else f"Go struct field {go_field}"
        raise DecodeError(f"json: cannot unmarshal number {number} into {where} of type {go_type}")


def _objects(value: Any, go_field: str, go_type: str) -> list[dict[str, Any]]:
    """A JSON array of objects, as Go decodes into ``[]go_type`` (null is an empty slice)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _unmarshal(value, go_field, f"[]{go_type}")
    for item in value:
        if not isinstance(item, dict):
            raise _unmarshal(item, go_field, go_type)
    return value


def _quantity(value: Any) -> Any:
    """A quantity in canonical form (the very object when it already is)."""
    try:
        text = quantity.canonical(value)
    except quantity.QuantityError as e:
        raise DecodeError(str(e)) from e
    return value if text == value else text


def _canonical_field(field: quantityfields.Field, value: Any) -> Any:
    """A quantity field's value in canonical form (the very object when it already is)."""
    if field.kind == quantityfields.SINGLE:
        return _quantity(value)
    if not isinstance(value, dict):
        raise _unmarshal(value, field.go_field, quantityfields.RESOURCE_LIST)
    out = {name: "0" if v is None else _quantity(v) for name, v in value.items()}
    return value if all(out[k] is v for k, v in value.items()) else out


# -- unknown fields of built-in kinds ------------------------------------------------------------
_OBJECT_META = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
_SPEC_STATUS = ("spec", "status")
# the top-level fields of each built-in kind's Go struct, besides apiVersion, kind and metadata
_TOP_LEVEL: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "configmaps"): ("data", "binaryData", "immutable"),
    ("", "secrets"): ("data", "stringData", "type", "immutable"),
    ("", "serviceaccounts"): ("secrets", "imagePullSecrets", "automountServiceAccountToken"),
    ("", "endpoints"): ("subsets",),
    ("", "events"): (
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "type",
        "eventTime",
        "series",
        "action",
        "related",
        "reportingComponent",
        "reportingInstance",
    ),
    ("events.k8s.io", "events"): (
        "eventTime",
        "series",
        "reportingController",
        "reportingInstance",
        "action",
        "reason",
        "regarding",
        "related",
        "note",
        "type",
        "deprecatedSource",
        "deprecatedFirstTimestamp",
        "deprecatedLastTimestamp",
        "deprecatedCount",
    ),
    ("", "namespaces"): _SPEC_STATUS,
    ("", "nodes"): _SPEC_STATUS,
    ("", "persistentvolumeclaims"): _SPEC_STATUS,
    ("", "resourcequotas"): _SPEC_STATUS,
    ("", "pods"): _SPEC_STATUS,
    ("", "services"): _SPEC_STATUS,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _SPEC_STATUS,
    ("apps", "daemonsets"): _SPEC_STATUS,
    ("apps", "deployments"): _SPEC_STATUS,
    ("apps", "replicasets"): _SPEC_STATUS,
    ("apps", "statefulsets"): _SPEC_STATUS,
    ("batch", "jobs"): _SPEC_STATUS,
    ("coordination.k8s.io", "leases"): ("spec",),
    ("policy", "poddisruptionbudgets"): _SPEC_STATUS,
    ("rbac.authorization.k8s.io", "roles"): ("rules",),
    ("rbac.authorization.k8s.io", "clusterroles"): ("rules", "aggregationRule"),
    ("rbac.authorization.k8s.io", "rolebindings"): ("subjects", "roleRef"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): ("subjects", "roleRef"),
    ("scheduling.k8s.io", "priorityclasses"): (
        "value",
        "globalDefault",
        "description",
        "preemptionPolicy",
    ),
}
_KNOWN_TOP_LEVEL = {
    key: frozenset(("apiVersion", "kind", "metadata", *fields))
    for key, fields in _TOP_LEVEL.items()
}


def drop_unknown_fields(rt: ResourceType, obj: dict[str, Any]) -> list[str]:
    """Remove, in place, the fields of a built-in kind's body that its Go struct does not have,
    at the top level and in ``metadata`` (the typed decoder drops them; deeper ones are kept,
    divergence D191); their dotted paths in the order the decoder meets them."""
    known = _KNOWN_TOP_LEVEL.get(rt.storage_key)
    if known is None:
        return []
    unknown: list[str] = []
    for key in list(obj):
        if key == "metadata" and isinstance(obj[key], dict):
            extra = [k for k in obj[key] if k not in _OBJECT_META]
            if extra:
                obj[key] = {k: v for k, v in obj[key].items() if k in _OBJECT_META}
                unknown += [f"metadata.{k}" for k in extra]
        elif key not in known:
            del obj[key]
            unknown.append(key)
    return unknown
