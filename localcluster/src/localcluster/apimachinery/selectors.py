"""Label and field selectors as the API server evaluates them.

Label selectors accept the full grammar of ``labels.Parse`` (``k=v``, ``k==v``, ``k!=v``,
``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``, ``k>n``, ``k<n``, joined by commas); ``!=`` and
``notin`` match objects that lack the key, and ``k in ()`` means ``k in ("")`` as it does there. Field selectors accept ``=``, ``==`` and ``!=`` on any dotted path of the object: a
missing value compares as the empty string, booleans as ``true``/``false``. Both parse once into
a predicate so list and watch filtering stay cheap.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from localcluster.apimachinery.errors import bad_request

Predicate = Callable[[dict[str, Any]], bool]

_KEY_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_SET_RE = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)\s*$")


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


# A malformed selector's message after "unable to parse requirement: " is ours, not the Go
# lexer's token-by-token wording: divergence D196.
def _check_key(key: str, text: str) -> str:
    if not _KEY_RE.match(key):
        raise bad_request(f"unable to parse requirement: invalid label key {key!r} in {text!r}")
    return key


def _check_value(value: str, text: str) -> str:
    if not _VALUE_RE.match(value) or len(value) > 63:
        raise bad_request(f"unable to parse requirement: invalid label value {value!r} in {text!r}")
    return value


def _label_requirement(part: str, text: str) -> Callable[[dict[str, Any]], bool]:
    m = _SET_RE.match(part)
    if m:
        key = _check_key(m.group(1), text)
        values = frozenset(_check_value(v.strip(), text) for v in m.group(3).split(","))
        if m.group(2) == "in":
            return lambda labels: key in labels and labels[key] in values
        return lambda labels: key not in labels or labels[key] not in values
    for op in ("!=", "==", "=", ">", "<"):
        if op in part:
            key, value = (s.strip() for s in part.split(op, 1))
            _check_key(key, text)
            _check_value(value, text)
            if op == "!=":
                return lambda labels: labels.get(key) != value
            if op in "<>":
                return _compare(key, op, _integer(value, text))
            return lambda labels: key in labels and labels[key] == value
    if part.startswith("!"):
        key = _check_key(part[1:].strip(), text)
        return lambda labels: key not in labels
    key = _check_key(part, text)
    return lambda labels: key in labels


def _integer(value: str, text: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", value):
        raise bad_request(
            f"unable to parse requirement: values[0]: Invalid value: {value!r}: for 'Gt', 'Lt' "
            f"operators, the value must be an integer in {text!r}"
        )
    return int(value)


def _compare(key: str, op: str, bound: int) -> Callable[[dict[str, Any]], bool]:
    """``key>n`` / ``key<n``: the label exists and, read as an integer, is above/below ``n``."""

    def match(labels: dict[str, Any]) -> bool:
        value = labels.get(key)
        if value is None or not re.fullmatch(r"[+-]?[0-9]+", value):
            return False
        return int(value) > bound if op == ">" else int(value) < bound

    return match


def parse_label_selector(text: str | None) -> Predicate | None:
    """Parse ``text`` into a predicate over an object, or None when it selects everything."""
    if not text or not text.strip():
        return None
    reqs = [_label_requirement(p, text) for p in _split_top(text)]

    def match(obj: dict[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r(labels) for r in reqs)

    return match


def field_value(obj: dict[str, Any], path: str) -> str:
    """The string value of a dotted field path, as the server compares it."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            cur = None
            break
        cur = cur.get(part)
    if cur is None:
        return "false" if path == "spec.unschedulable" else ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    if isinstance(cur, dict):
        return ""
    return str(cur)


_FIELD_ALIASES = {"source": "source.component"}


def parse_field_selector(text: str | None) -> Predicate | None:
    """Parse a field selector into a predicate, or None when it selects everything."""
    if not text or not text.strip():
        return None
    reqs: list[tuple[str, bool, str]] = []
    for part in _split_top(text):
        for op in ("!=", "==", "="):
            if op in part:
                field, value = (s.strip() for s in part.split(op, 1))
                if not field:
                    break
                reqs.append((_FIELD_ALIASES.get(field, field), op == "!=", value))
                break
        else:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
    if len(reqs) != len(_split_top(text)):
        raise bad_request(f"invalid selector: '{text}'")

    def match(obj: dict[str, Any]) -> bool:
        return all((field_value(obj, field) == value) != negate for field, negate, value in reqs)

    return match


_META_FIELDS = frozenset({"metadata.name", "metadata.namespace"})
# kinds with field label conversions of their own: the fields each takes besides metadata's
_KIND_FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("", "pods"): frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        }
    ),
    ("", "secrets"): frozenset({"type"}),
    ("", "events"): frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
    ("", "services"): frozenset({"spec.clusterIP", "spec.type"}),
    ("", "namespaces"): frozenset({"status.phase"}),
    ("", "nodes"): frozenset({"spec.unschedulable"}),
    ("apps", "replicasets"): frozenset({"status.replicas"}),
    ("apps", "statefulsets"): frozenset({"status.successful"}),
    ("batch", "jobs"): frozenset({"status.successful"}),
}
_UNCHECKED = frozenset({("events.k8s.io", "events")})


def check_field_selector(
    storage_key: tuple[str, str], custom: bool, text: str | None, selectable: frozenset[str]
) -> None:
    """400 for a field selector naming a field the kind cannot be selected by, with the
    message of the kind's field label conversion (or of the default one, metadata only).
    ``selectable``: a custom resource's selectableFields."""
    if not text or not text.strip() or storage_key in _UNCHECKED:
        return
    own = custom or storage_key in _KIND_FIELDS
    allowed = _META_FIELDS | _KIND_FIELDS.get(storage_key, frozenset()) | selectable
    for part in _split_top(text):
        for op in ("!=", "==", "="):
            if op in part:
                field = part.split(op, 1)[0].strip()
                if field and field not in allowed:
                    if own:
                        raise bad_request(f"field label not supported: {field}")
                    raise bad_request(
                        f'"{field}" is not a known field selector: only "metadata.name", '
                        '"metadata.namespace"'
                    )
                break


def combine(*preds: Predicate | None) -> Predicate | None:
    """AND of the non-None predicates (None when there are none)."""
    active = [p for p in preds if p is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]
    return lambda obj: all(p(obj) for p in active)


def label_selector_matches(selector: dict[str, Any] | None, labels: dict[str, Any]) -> bool:
    """Whether a ``metav1.LabelSelector`` (matchLabels and matchExpressions) selects ``labels``;
    an empty or missing selector selects nothing, as workload controllers treat it."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True
