"""Name validation and the per-kind checks the real server makes on create and update.

Names follow each kind's rule (``ResourceType.name_rule``): RFC 1123 subdomains for most kinds
and all custom resources, RFC 1123 labels for namespaces, RFC 1035 labels for services, path
segments for RBAC objects. Metadata checks include the 256 KiB total annotation size. Pod specs
(pods and workload templates) get the container, resource-quantity, node-selector and
node-affinity checks of ``ValidatePodSpec`` that our clients can trip over, container ports and
tolerations (``ports``). Each check returns a
list of ``field_cause`` dicts with the real server's messages; an empty list means valid.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from decimal import Decimal
from typing import Any

from localcluster.apimachinery import quantity
from localcluster.apimachinery.errors import field_cause
from localcluster.controlplane.emulated.admission import ports

_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


_DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
# name rule -> (regex, its message, maximum length)
_NAME_RULES = {
    "label": (_LABEL_RE, _LABEL_MSG, 63),
    "dns1035": (_DNS1035_RE, _DNS1035_MSG, 63),
    "subdomain": (_SUBDOMAIN_RE, _SUBDOMAIN_MSG, 253),
}
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def is_dns_label(name: str) -> bool:
    return len(name) <= 63 and bool(_LABEL_RE.match(name))


def is_dns_subdomain(name: str) -> bool:
    return len(name) <= 253 and bool(_SUBDOMAIN_RE.match(name))


def name_errors(name: str, rule: str) -> list[str]:
    """The messages the real server gives for ``name`` under ``rule`` (one per broken rule)."""
    if rule == "path":
        if name in (".", ".."):
            return [f'may not be "{name}"']
        return [f"may not contain '{c}'" for c in "/%" if c in name]
    regex, message, limit = _NAME_RULES[rule]
    out = [f"must be no more than {limit} characters"] if len(name) > limit else []
    if not regex.match(name):
        out.append(message)
    return out


def validate_name(name: str, rule: str, field: str = "metadata.name") -> list[dict[str, Any]]:
    return [
        field_cause(field, f'Invalid value: "{name}": {msg}') for msg in name_errors(name, rule)
    ]


def validate_pod(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return [field_cause("spec.containers", "Required value", "FieldValueRequired")]
    return validate_pod_spec(spec, "spec")


def validate_pod_spec(spec: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """Containers (name, image, resources), nodeSelector and node affinity of a pod spec."""
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        return [field_cause(f"{path}.containers", "Required value", "FieldValueRequired")]
    causes: list[dict[str, Any]] = []
    for kind in ("initContainers", "containers"):
        seen: set[str] = set()
        for i, c in enumerate(spec.get(kind) or []):
            base = f"{path}.{kind}[{i}]"
            if not isinstance(c, dict):
                causes.append(field_cause(base, "Invalid value: must be an object"))
                continue
            name = c.get("name")
            if not name:
                causes.append(field_cause(f"{base}.name", "Required value", "FieldValueRequired"))
            elif not is_dns_label(str(name)):
                causes.append(field_cause(f"{base}.name", f'Invalid value: "{name}": {_LABEL_MSG}'))
            elif name in seen:
                causes.append(
                    field_cause(f"{base}.name", f'Duplicate value: "{name}"', "FieldValueDuplicate")
                )
            else:
                seen.add(name)
            if not c.get("image"):
                causes.append(field_cause(f"{base}.image", "Required value", "FieldValueRequired"))
            causes += _resource_errors(c.get("resources") or {}, f"{base}.resources")
            causes += ports.container_port_errors(c.get("ports") or [], f"{base}.ports")
    causes += ports.toleration_errors(
        spec.get("tolerations") or [], f"{path}.tolerations", _qualified_name_errors
    )
    causes += label_errors(spec.get("nodeSelector") or {}, f"{path}.nodeSelector")
    causes += _node_affinity_errors(spec.get("affinity"), f"{path}.affinity.nodeAffinity")
    return causes


def _resource_errors(resources: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """Negative quantities, and requests above their limits (quantities already parse)."""
    causes: list[dict[str, Any]] = []
    parsed: dict[str, dict[str, Decimal]] = {}
    for part in ("limits", "requests"):
        parsed[part] = {}
        for name, value in (resources.get(part) or {}).items():
            if value is None:
                continue
            amount = parsed[part][name] = quantity.parse(value)
            if amount < 0:
                causes.append(
                    field_cause(
                        f"{path}.{part}[{name}]",
                        f'Invalid value: "{quantity.text(value)}": must be greater than or equal to 0',
                    )
                )
    for name, amount in parsed["requests"].items():
        limit = parsed["limits"].get(name)
        if limit is not None and amount > limit:
            shown = quantity.text(resources["requests"][name])
            causes.append(
                field_cause(
                    f"{path}.requests[{name}]",
                    f'Invalid value: "{shown}": must be less than or equal to {name} limit of '
                    f"{quantity.text(resources['limits'][name])}",
                )
            )
    return causes


_NODE_SELECTOR_OPERATORS = ("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn")


def _node_affinity_errors(affinity: Any, path: str) -> list[dict[str, Any]]:
    """The node selector requirements of required and preferred node affinity terms."""
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    if not isinstance(node, dict):
        return []
    terms: list[tuple[str, Any]] = []
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        base = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms += [
            (f"{base}[{i}]", t) for i, t in enumerate(required.get("nodeSelectorTerms") or [])
        ]
    preferred = node.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    base = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    terms += [
        (f"{base}[{i}].preference", p.get("preference"))
        for i, p in enumerate(preferred if isinstance(preferred, list) else [])
        if isinstance(p, dict)
    ]
    causes: list[dict[str, Any]] = []
    for term_path, term in terms:
        if not isinstance(term, dict):
            causes.append(field_cause(term_path, "Invalid value: must be an object"))
            continue
        for i, req in enumerate(term.get("matchExpressions") or []):
            causes += _requirement_errors(req, f"{term_path}.matchExpressions[{i}]")
    return causes


def _requirement_errors(req: Any, path: str) -> list[dict[str, Any]]:
    if not isinstance(req, dict):
        return [field_cause(path, "Invalid value: must be an object")]
    op, values = req.get("operator"), req.get("values") or []
    if op not in _NODE_SELECTOR_OPERATORS:
        allowed = ", ".join(f'"{o}"' for o in _NODE_SELECTOR_OPERATORS)
        return [
            field_cause(
                f"{path}.operator",
                f'Unsupported value: "{op}": supported values: {allowed}',
                "FieldValueNotSupported",
            )
        ]
    causes: list[dict[str, Any]] = []
    if op in ("In", "NotIn") and not values:
        causes.append(
            field_cause(
                f"{path}.values",
                "Required value: must be specified when `operator` is 'In' or 'NotIn'",
                "FieldValueRequired",
            )
        )
    elif op in ("Exists", "DoesNotExist") and values:
        causes.append(
            field_cause(
                f"{path}.values",
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                "FieldValueForbidden",
            )
        )
    elif op in ("Gt", "Lt"):
        if not isinstance(values, list) or len(values) != 1:
            causes.append(
                field_cause(
                    f"{path}.values",
                    "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
                    "FieldValueRequired",
                )
            )
        elif not re.fullmatch(r"[+-]?[0-9]+", str(values[0])):
            causes.append(
                field_cause(
                    f"{path}.values[0]", f'Invalid value: "{values[0]}": must be an integer'
                )
            )
    key = req.get("key")
    why = _qualified_name_errors(key) if isinstance(key, str) else "must be a string"
    if why:
        causes.append(field_cause(f"{path}.key", f'Invalid value: "{key}": {why}'))
    return causes


API_APPROVED = "api-approved.kubernetes.io"
_APPROVAL_HELP = "see https://github.com/kubernetes/enhancements/pull/1111"


def _api_approval_cause(group: str, annotations: dict[str, Any]) -> dict[str, Any] | None:
    """kube-apiserver's rule for the groups Kubernetes reserves (``k8s.io``, ``kubernetes.io``
    and their subdomains): a CRD there names its API review in an annotation, a URL, or a reason
    starting with "unapproved"."""
    protected = any(group == d or group.endswith("." + d) for d in ("k8s.io", "kubernetes.io"))
    if not protected:
        return None
    value = annotations.get(API_APPROVED)
    path = f"metadata.annotations[{API_APPROVED}]"
    if not value:
        return field_cause(
            path,
            f'Required value: protected groups must have approval annotation "{API_APPROVED}", '
            + _APPROVAL_HELP,
            "FieldValueRequired",
        )
    parsed = urllib.parse.urlparse(str(value))
    if str(value).startswith("unapproved") or (parsed.scheme and parsed.netloc):
        return None
    return field_cause(
        path,
        f'Invalid value: "{value}": protected groups must have approval annotation '
        f'"{API_APPROVED}" with either a URL or a reason starting with "unapproved", '
        + _APPROVAL_HELP,
    )


def validate_crd(crd: dict[str, Any]) -> list[dict[str, Any]]:
    causes: list[dict[str, Any]] = []
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    plural = names.get("plural") or ""
    if not group:
        causes.append(field_cause("spec.group", "Required value", "FieldValueRequired"))
    elif "." not in group or not is_dns_subdomain(group):
        causes.append(
            field_cause(
                "spec.group", f'Invalid value: "{group}": should be a domain with at least one dot'
            )
        )
    if not plural:
        causes.append(field_cause("spec.names.plural", "Required value", "FieldValueRequired"))
    if not names.get("kind"):
        causes.append(field_cause("spec.names.kind", "Required value", "FieldValueRequired"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(
            field_cause(
                "spec.scope",
                f'Unsupported value: "{spec.get("scope")}": supported values: "Cluster", "Namespaced"',
                "FieldValueNotSupported",
            )
        )
    versions = spec.get("versions") or []
    if not versions:
        causes.append(field_cause("spec.versions", "Required value", "FieldValueRequired"))
    for i, v in enumerate(versions):
        vname = str(v.get("name") or "")
        if not (len(vname) <= 63 and _DNS1035_RE.match(vname)):
            causes.append(
                field_cause(f"spec.versions[{i}].name", f'Invalid value: "{vname}": {_DNS1035_MSG}')
            )
    names = [v.get("name") for v in versions]
    if len(set(names)) != len(names):
        causes.append(
            field_cause("spec.versions", "Invalid value: must contain unique version names")
        )
    if versions and sum(1 for v in versions if v.get("storage")) != 1:
        causes.append(
            field_cause(
                "spec.versions",
                "Invalid value: must have exactly one version marked as storage version",
            )
        )
    approval = _api_approval_cause(group, (crd.get("metadata") or {}).get("annotations") or {})
    if approval:
        causes.append(approval)
    name = (crd.get("metadata") or {}).get("name")
    if group and plural and name != f"{plural}.{group}":
        causes.append(
            field_cause(
                "metadata.name",
                f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group',
            )
        )
    return causes


def validate_crd_stored_versions(crd: dict[str, Any]) -> list[dict[str, Any]]:
    """``status.storedVersions`` against ``spec.versions``, on every write of a CRD: a version
    objects may still be stored at cannot leave ``spec.versions``."""
    stored = list((crd.get("status") or {}).get("storedVersions") or [])
    path = "status.storedVersions"
    if not stored:
        return [field_cause(path, "Invalid value: must have at least one stored version")]
    causes = []
    declared = {str(v.get("name")) for v in (crd.get("spec") or {}).get("versions") or []}
    for v in (crd.get("spec") or {}).get("versions") or []:
        if v.get("storage") and v.get("name") not in stored:
            causes.append(
                field_cause(path, f"Invalid value: must have the storage version {v.get('name')}")
            )
    for i, name in enumerate(stored):
        if name not in declared:
            causes.append(
                field_cause(
                    f"{path}[{i}]", f'Invalid value: "{name}": must appear in spec.versions'
                )
            )
    return causes


_NAME_PART_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_QUALIFIED_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def _qualified_name_errors(key: str) -> str | None:
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        return "prefix part must be non-empty"
    if prefix and not is_dns_subdomain(prefix):
        return "prefix part " + _SUBDOMAIN_MSG
    if not name or len(name) > 63 or not _NAME_PART_RE.match(name):
        return (
            _QUALIFIED_MSG
            if name and len(name) <= 63
            else "name part must be no more than 63 characters"
        )
    return None


def validate_metadata(m: dict[str, Any]) -> list[dict[str, Any]]:
    """Label keys and values, annotation keys and total size, ownerReferences, finalizers."""
    return (
        label_errors(m.get("labels") or {}, "metadata.labels")
        + _annotation_errors(m.get("annotations") or {})
        + _owner_reference_errors(m.get("ownerReferences") or [])
        + _finalizer_errors(m.get("finalizers") or [])
    )


def label_errors(labels: dict[str, Any], path: str) -> list[dict[str, Any]]:
    causes: list[dict[str, Any]] = []
    for key, value in labels.items():
        why = _qualified_name_errors(str(key))
        if why:
            causes.append(field_cause(path, f'Invalid value: "{key}": {why}'))
        if (
            not isinstance(value, str)
            or len(value) > 63
            or (value and not _NAME_PART_RE.match(value))
        ):
            causes.append(
                field_cause(
                    path,
                    f"Invalid value: \"{value}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                )
            )
    return causes


def _annotation_errors(annotations: dict[str, Any]) -> list[dict[str, Any]]:
    causes: list[dict[str, Any]] = []
    size = sum(len(str(k)) + len(v) for k, v in annotations.items() if isinstance(v, str))
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(
            field_cause(
                "metadata.annotations",
                f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes",
                "FieldValueTooLong",
            )
        )
    for key, value in annotations.items():
        why = _qualified_name_errors(str(key))
        if why:
            causes.append(field_cause("metadata.annotations", f'Invalid value: "{key}": {why}'))
        if not isinstance(value, str):
            causes.append(
                field_cause(
                    f"metadata.annotations[{key}]",
                    "Invalid value: annotation values must be strings",
                )
            )
    return causes


def _owner_reference_errors(refs: list[Any]) -> list[dict[str, Any]]:
    causes: list[dict[str, Any]] = []
    for i, ref in enumerate(refs):
        if not isinstance(ref, dict):
            causes.append(
                field_cause(f"metadata.ownerReferences[{i}]", "Invalid value: must be an object")
            )
            continue
        for f in ("apiVersion", "kind", "name", "uid"):
            if not ref.get(f):
                causes.append(
                    field_cause(
                        f"metadata.ownerReferences.{f}",
                        f'Invalid value: "": {f} must not be empty',
                    )
                )
    if sum(1 for ref in refs if isinstance(ref, dict) and ref.get("controller")) > 1:
        causes.append(
            field_cause(
                "metadata.ownerReferences",
                "Invalid value: Only one reference can have Controller set to true",
            )
        )
    return causes


def _finalizer_errors(finalizers: list[Any]) -> list[dict[str, Any]]:
    causes: list[dict[str, Any]] = []
    for i, fin in enumerate(finalizers):
        why = _qualified_name_errors(str(fin)) if isinstance(fin, str) else "must be a string"
        if why:
            causes.append(
                field_cause(f"metadata.finalizers[{i}]", f'Invalid value: "{fin}": {why}')
            )
    return causes


# the data keys each built-in Secret type needs (ValidateSecret)
_SECRET_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
}


def validate_secret(obj: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, Any]]:
    """``ValidateSecret``'s checks of a type's required keys, and the type's immutability."""
    causes: list[dict[str, Any]] = []
    kind = obj.get("type") or "Opaque"
    data = obj.get("data") or {}
    for key in _SECRET_KEYS.get(str(kind), ()):
        if key not in data:
            causes.append(field_cause(f"data[{key}]", "Required value", "FieldValueRequired"))
    if old is not None and (old.get("type") or "Opaque") != kind:
        causes.append(field_cause("type", f"Invalid value: {json.dumps(kind)}: field is immutable"))
    return causes
