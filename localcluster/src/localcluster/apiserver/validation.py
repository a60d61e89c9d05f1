"""Name validation and the per-kind checks the real server makes on create and update.

Only the checks the clients and tests rely on: RFC 1123 names, required pod container fields,
CRD names, and the namespace/name consistency rules. Each returns a list of ``field_cause`` dicts;
an empty list means valid.
"""

from __future__ import annotations

import re

from .errors import field_cause

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


def is_dns_label(name: str) -> bool:
    return len(name) <= 63 and bool(_LABEL_RE.match(name))


def is_dns_subdomain(name: str) -> bool:
    return len(name) <= 253 and bool(_SUBDOMAIN_RE.match(name))


def validate_name(name: str, rule: str, field: str = "metadata.name") -> list[dict]:
    if rule == "label":
        if not is_dns_label(name):
            return [field_cause(field, f'Invalid value: "{name}": {_LABEL_MSG}')]
    elif rule == "path":
        if name in (".", "..") or "/" in name or "%" in name:
            return [field_cause(field, f'Invalid value: "{name}": may not contain "/" or "%"')]
    elif not is_dns_subdomain(name):
        return [field_cause(field, f'Invalid value: "{name}": {_SUBDOMAIN_MSG}')]
    return []


def validate_pod(pod: dict) -> list[dict]:
    causes: list[dict] = []
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return [field_cause("spec.containers", "Required value", "FieldValueRequired")]
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        return [field_cause("spec.containers", "Required value", "FieldValueRequired")]
    for kind in ("initContainers", "containers"):
        seen: set[str] = set()
        for i, c in enumerate(spec.get(kind) or []):
            base = f"spec.{kind}[{i}]"
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
    return causes


def validate_crd(crd: dict) -> list[dict]:
    causes: list[dict] = []
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
    elif sum(1 for v in versions if v.get("storage")) != 1:
        causes.append(
            field_cause(
                "spec.versions",
                "Invalid value: must have exactly one version marked as storage version",
            )
        )
    name = (crd.get("metadata") or {}).get("name")
    if group and plural and name != f"{plural}.{group}":
        causes.append(
            field_cause(
                "metadata.name",
                f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group',
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


def validate_metadata(m: dict) -> list[dict]:
    """Label keys and values, annotation keys, ownerReferences and finalizer names."""
    return (
        _label_errors(m.get("labels") or {})
        + _annotation_errors(m.get("annotations") or {})
        + _owner_reference_errors(m.get("ownerReferences") or [])
        + _finalizer_errors(m.get("finalizers") or [])
    )


def _label_errors(labels: dict) -> list[dict]:
    causes: list[dict] = []
    for key, value in labels.items():
        why = _qualified_name_errors(str(key))
        if why:
            causes.append(field_cause("metadata.labels", f'Invalid value: "{key}": {why}'))
        if (
            not isinstance(value, str)
            or len(value) > 63
            or (value and not _NAME_PART_RE.match(value))
        ):
            causes.append(
                field_cause(
                    "metadata.labels",
                    f"Invalid value: \"{value}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                )
            )
    return causes


def _annotation_errors(annotations: dict) -> list[dict]:
    causes: list[dict] = []
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


def _owner_reference_errors(refs: list) -> list[dict]:
    causes: list[dict] = []
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


def _finalizer_errors(finalizers: list) -> list[dict]:
    causes: list[dict] = []
    for i, fin in enumerate(finalizers):
        why = _qualified_name_errors(str(fin)) if isinstance(fin, str) else "must be a string"
        if why:
            causes.append(
                field_cause(f"metadata.finalizers[{i}]", f'Invalid value: "{fin}": {why}')
            )
    return causes
