"""CRD validation rules (``x-kubernetes-validations``) evaluated as apiextensions-apiserver does.

The CEL engine is ``cel-expr-python``: the CEL project's own Python binding of cel-cpp, so the
language (macros, ``has``, optionals, heterogeneous equality, errors) is the one specified by
the CEL spec that Kubernetes' cel-go implements, and the standard ``strings`` extension
(``lowerAscii``, ``split``, ``join``, ``replace``, ``substring``, ``trim``...) is the same one
Kubernetes enables. The Kubernetes list library (``isSorted``, ``sum``, ``min``, ``max``,
``indexOf``, ``lastIndexOf``) and regex library (``find``, ``findAll``) are added here.

Semantics kept from apiextensions-apiserver (``schema/cel/validation.go``):

* rules sit on any schema node; ``self`` is that node's value (null values are not validated);
  at the root ``self.metadata`` shows only ``name`` and ``generateName``;
* a rule that mentions ``oldSelf`` is a transition rule: it runs only on updates, and only
  where the old value can be correlated (object properties, map values, and items of
  ``x-kubernetes-list-type: map`` lists by their keys);
* ratcheting: a failing rule without ``oldSelf`` on a value that did not change is a warning,
  not an error, so objects stored before a rule existed stay writable (their status too);
* a false rule gives ``<path>[.fieldPath]: Invalid value: <value>: <message>`` (the value
  left out for an object or an array, Go-quoted for a string) where the message is ``messageExpression``'s result, else ``message``, else ``failed rule: <rule>``;
  ``reason`` picks Forbidden/Required/Duplicate instead; a rule that fails to evaluate gives
  ``<error> evaluating rule: <rule or message>``;
* rules compile when the CRD is written: a CRD with a rule that does not compile is refused.

Not modelled: the static and runtime cost budgets (divergence D195), ``optionalOldSelf`` and typed declarations
(``self`` is ``dyn``, so a misspelt field is a runtime "no such key" instead of a compile error).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_strings

from localcluster.apimachinery import deepjson
from localcluster.apimachinery.errors import field_cause
from localcluster.apimachinery.objects import deeper_than, equal

_T = cel.Type
_RULES = "x-kubernetes-validations"
_STRING_LITERAL = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"")
_OLD_SELF = re.compile(r"\boldSelf\b")
_MAX_MESSAGE = 5 * 1024  # celconfig.MaxEvaluatedMessageExpressionSizeBytes
# Objects up to this deep are safe to hand cel-cpp on any thread (a default 8 MiB stack holds
# about 5,000 levels); deeper ones get a thread whose stack holds deepjson.MAX_DEPTH four times.
CEL_STACK_SAFE_DEPTH = 2_000
_DEEP_STACK_BYTES = 4 * deepjson.MAX_DEPTH * 1536
_STACK_SIZE_LOCK = threading.Lock()
# what the real server adds when type errors keep it from running the rules
NOT_CHECKED = (
    "Invalid value: null: some validation rules were not checked because the object was "
    "invalid; correct the existing errors to complete validation"
)


# -- the Kubernetes list and regex libraries ---------------------------------------------------
def _is_sorted(xs: list[Any]) -> bool:
    return all(xs[i] <= xs[i + 1] for i in range(len(xs) - 1))


def _index_of(xs: list[Any], x: Any) -> int:
    return next((i for i, v in enumerate(xs) if v == x), -1)


def _last_index_of(xs: list[Any], x: Any) -> int:
    return next((i for i in range(len(xs) - 1, -1, -1) if xs[i] == x), -1)


def _member(
    name: str, overload: str, result: cel.Type, params: list[Any], impl: Any
) -> cel.FunctionDecl:
    return cel.FunctionDecl(
        name, [cel.Overload(overload, result, params, is_member=True, impl=impl)]
    )


_LIST = _T.List(_T.DYN)
_K8S_LIBRARIES = cel.CelExtension(
    "kubernetes",
    [
        _member("isSorted", "list_is_sorted", _T.BOOL, [_LIST], _is_sorted),
        _member("sum", "list_sum", _T.DYN, [_LIST], sum),
        _member("min", "list_min", _T.DYN, [_LIST], min),
        _member("max", "list_max", _T.DYN, [_LIST], max),
        _member("indexOf", "list_index_of", _T.INT, [_LIST, _T.DYN], _index_of),
        _member("lastIndexOf", "list_last_index_of", _T.INT, [_LIST, _T.DYN], _last_index_of),
        _member(
            "find",
            "string_find",
            _T.STRING,
            [_T.STRING, _T.STRING],
            lambda s, p: m.group(0) if (m := re.search(p, s)) else "",
        ),
        _member(
            "findAll",
            "string_find_all",
            _T.List(_T.STRING),
            [_T.STRING, _T.STRING],
            lambda s, p: [m.group(0) for m in re.finditer(p, s)],
        ),
    ],
)


class _Compiler:
    """One CEL environment and a cache of compiled expressions (compiling costs milliseconds)."""

    def __init__(self) -> None:
        self._env = cel.NewEnv(
            variables={"self": _T.DYN, "oldSelf": _T.DYN},
            extensions=[ext_strings.ExtStrings(), _K8S_LIBRARIES],
        )
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    def compile(self, source: str) -> Any:
        """The compiled expression, or raise ``ValueError`` with the compiler's message."""
        with self._lock:
            hit = self._cache.get(source)
            if hit is None:
                try:
                    hit = self._env.compile(source)
                except RuntimeError as e:
                    hit = ValueError(_strip_status(str(e)))
                self._cache[source] = hit
        if isinstance(hit, ValueError):
            raise hit
        return hit


_COMPILER = _Compiler()


def _strip_status(message: str) -> str:
    """``INVALID_ARGUMENT: ERROR: ...`` -> ``ERROR: ...`` (cel-cpp prefixes a status code)."""
    message = re.sub(r"\s*\[[A-Z_]+\]$", "", message.strip())
    return re.sub(r"^[A-Z_]+: ", "", message)


def _runtime_error(text: str) -> str:
    """cel-cpp's evaluation errors in cel-go's words, as Kubernetes users see them."""
    text = _strip_status(text)
    if m := re.match(r'Key not found in map : "?(.*?)"?$', text):
        return f"no such key: {m.group(1)}"
    if m := re.match(r"Index error: index=(-?\d+)", text):
        return f"index out of bounds: {m.group(1)}"
    if text == "divide by zero":
        return "division by zero"
    return text


def uses_old_self(rule: str) -> bool:
    return bool(_OLD_SELF.search(_STRING_LITERAL.sub("''", rule)))


# -- CRD write: every rule must compile --------------------------------------------------------
def compile_errors(schema: Any, path: str) -> list[dict[str, Any]]:
    """Causes for rules or message expressions of ``schema`` (at ``path``) that do not compile."""
    causes: list[dict[str, Any]] = []
    for node_path, node in _schema_nodes(schema, path):
        for i, rule in enumerate(node.get(_RULES) or []):
            base = f"{node_path}.{_RULES}[{i}]"
            if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
                causes.append(field_cause(f"{base}.rule", "Required value", "FieldValueRequired"))
                continue
            for key in ("rule", "messageExpression"):
                source = rule.get(key)
                if not isinstance(source, str):
                    continue
                try:
                    _COMPILER.compile(source)
                except ValueError as e:
                    what = (
                        "compilation failed"
                        if key == "rule"
                        else "messageExpression compilation failed"
                    )
                    causes.append(
                        field_cause(f"{base}.{key}", f'Invalid value: "{source}": {what}: {e}')
                    )
    return causes


def _schema_nodes(schema: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(schema, dict):
        return
    yield path, schema
    for name, sub in (schema.get("properties") or {}).items():
        yield from _schema_nodes(sub, f"{path}.properties[{name}]")
    for key in ("items", "additionalProperties"):
        yield from _schema_nodes(schema.get(key), f"{path}.{key}")


# -- custom resource write: evaluate the rules -------------------------------------------------
@dataclass
class Outcome:
    """Errors (422 causes) and ratcheted failures (``Warning`` headers)."""

    causes: list[dict[str, Any]]
    warnings: list[str]


def validate(obj: dict[str, Any], old: dict[str, Any] | None, schema: dict[str, Any]) -> Outcome:
    """Evaluate every rule of ``schema`` over ``obj`` (``old`` on updates). cel-cpp converts a
    value it is handed recursively, about 1.5 KiB of native stack a level: an object deeper
    than ``CEL_STACK_SAFE_DEPTH`` would overflow a thread's stack (a crash, not an error), so
    its rules run on a thread of its own with a stack for ``deepjson.MAX_DEPTH`` levels."""
    if deeper_than(obj, CEL_STACK_SAFE_DEPTH) or (
        old is not None and deeper_than(old, CEL_STACK_SAFE_DEPTH)
    ):
        return _on_deep_stack(lambda: _validate(obj, old, schema))
    return _validate(obj, old, schema)


def _on_deep_stack(run: Callable[[], Outcome]) -> Outcome:
    """``run()`` on a new thread with a ``_DEEP_STACK_BYTES`` stack."""
    result: list[Outcome] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(run())
        except BaseException as e:  # handed to the caller's thread
            failure.append(e)

    with _STACK_SIZE_LOCK:
        previous = threading.stack_size(_DEEP_STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="cel-deep-object", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join()
    if failure:
        raise failure[0]
    return result[0]


def _validate(obj: dict[str, Any], old: dict[str, Any] | None, schema: dict[str, Any]) -> Outcome:
    out = Outcome([], [])
    _validate_node(
        _root_view(obj),
        _root_view(old) if old is not None else None,
        schema,
        "",
        out,
        old is not None,
    )
    return out


def _root_view(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as root rules see it: metadata reduced to name and generateName."""
    view = dict(obj)
    m = obj.get("metadata") or {}
    view["metadata"] = {k: m[k] for k in ("name", "generateName") if k in m}
    return view


def _validate_node(
    value: Any, old: Any, schema: Any, path: str, out: Outcome, unchanged_parent: bool
) -> None:
    if value is None or not isinstance(schema, dict):
        return
    correlated = old is not None
    unchanged = equal(value, old) if correlated else unchanged_parent
    for rule in schema.get(_RULES) or []:
        _run_rule(rule, value, old, schema, path, out, unchanged)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        old_map = old if isinstance(old, dict) else {}
        for key, sub in value.items():
            child_schema = props.get(key) if key in props else extra
            if isinstance(child_schema, dict):
                child = f"{path}.{key}" if key in props else f"{path}[{key}]"
                _validate_node(
                    sub, old_map.get(key), child_schema, child.lstrip("."), out, unchanged
                )
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        old_items = _correlate_items(value, old, schema)
        for i, item in enumerate(value):
            _validate_node(item, old_items[i], schema["items"], f"{path}[{i}]", out, unchanged)


def _correlate_items(value: list[Any], old: Any, schema: dict[str, Any]) -> list[Any]:
    """The old item matching each new one: by key for map lists, none otherwise."""
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if schema.get("x-kubernetes-list-type") != "map" or not keys or not isinstance(old, list):
        return [None] * len(value)

    def key(item: Any) -> tuple[Any, ...] | None:
        return tuple(item.get(k) for k in keys) if isinstance(item, dict) else None

    by_key = {key(item): item for item in old}
    return [by_key.get(key(item)) for item in value]


def _run_rule(
    rule: Any,
    value: Any,
    old: Any,
    schema: dict[str, Any],
    path: str,
    out: Outcome,
    unchanged: bool,
) -> None:
    if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
        return
    source = rule["rule"]
    transition = uses_old_self(source)
    if transition and old is None:
        return  # transition rules run only against a correlated old value
    label = (rule.get("message") or "").strip() or source.strip()
    kind = schema.get("type") or "object"
    activation = {"self": value, "oldSelf": old} if transition else {"self": value}
    try:
        result = _COMPILER.compile(source).eval(data=activation)
    except (ValueError, RuntimeError, TypeError) as e:
        error = str(e)
    else:
        if result.type() == _T.BOOL and result.value() is True:
            return
        error = str(result.value()) if result.type() == _T.ERROR else ""
    if error:
        detail = f"{_runtime_error(error)} evaluating rule: {label}"
        out.causes.append(field_cause(path or "<nil>", f'Invalid value: "{kind}": {detail}'))
        return
    field = path or "<nil>"  # the root's field path is nil in Kubernetes, printed "<nil>"
    if isinstance(rule.get("fieldPath"), str) and rule["fieldPath"].strip("."):
        relative = rule["fieldPath"].lstrip(".")
        field = f"{path}.{relative}" if path else relative
    cause = _failure(field, kind, value, _message(rule, activation), rule.get("reason"))
    if unchanged and not transition:
        out.warnings.append(f"{cause['field']}: {cause['message']}")
    else:
        out.causes.append(cause)


def _message(rule: dict[str, Any], activation: dict[str, Any]) -> str:
    source = rule.get("messageExpression")
    if isinstance(source, str):
        try:
            result = _COMPILER.compile(source).eval(data=activation)
            text = result.value() if result.type() == _T.STRING else None
        except (ValueError, RuntimeError, TypeError):
            text = None
        if (
            isinstance(text, str)
            and text.strip()
            and "\n" not in text.strip()
            and len(text.strip()) <= _MAX_MESSAGE
        ):
            return text.strip()
    message = (rule.get("message") or "").strip()
    return message or f"failed rule: {rule['rule'].strip()}"


def _failure(field: str, kind: str, value: Any, detail: str, reason: Any) -> dict[str, Any]:
    """A false rule's cause, as ``fieldErrorForReason`` builds it: the value is the node's own,
    left out for an object or an array (``field.OmitValueType``)."""
    shown = "" if kind in ("object", "array") else f": {go_value(value)}"
    if reason == "FieldValueForbidden":
        return field_cause(field, f"Forbidden: {detail}", "FieldValueForbidden")
    if reason == "FieldValueRequired":
        return field_cause(field, f"Required value: {detail}", "FieldValueRequired")
    if reason == "FieldValueDuplicate":
        return field_cause(field, f"Duplicate value{shown}", "FieldValueDuplicate")
    return field_cause(field, f"Invalid value{shown}: {detail}")


def go_value(value: Any) -> str:
    """A bad value as ``field.Error`` prints it: a string quoted (Go's ``%q``), a number or a
    boolean as Go's ``%v`` prints it, anything else as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    return json.dumps(value, separators=(",", ":"))


def _go_float(value: float) -> str:
    """Go's ``%v`` of a float64: the shortest digits, in ``%g`` form (exponent from e+XX)."""
    if math.isinf(value) or math.isnan(value):
        return {True: "+Inf", False: "-Inf"}[value > 0] if math.isinf(value) else "NaN"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    exp10 = len(digits) + exponent - 1
    minus = "-" if sign else ""
    if exp10 < -4 or exp10 >= len(text):
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'+' if exp10 >= 0 else '-'}{abs(exp10):02d}"
    if exp10 < 0:
        return f"{minus}0.{'0' * (-exp10 - 1)}{text}"
    whole, frac = text[: exp10 + 1], text[exp10 + 1 :]
    return f"{minus}{whole}{'.' + frac if frac else ''}"
