"""Label selectors on the client side, as apimachinery's ``labels`` package has them.

A :class:`Selector` is an AND of :class:`Requirement` s. Selectors come from the
string form (``a=b,c!=d,e in (f,g),h notin (i),j,!k,n>3``), from a plain label
set, or from a ``metav1.LabelSelector`` dict (matchLabels + matchExpressions).
``str(selector)`` is canonical: requirements sorted by key, set values sorted.
A selector with no requirements matches everything; :data:`NOTHING` (what a
``None`` LabelSelector converts to) matches nothing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
IN = "in"
NOT_IN = "notin"
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"
_EQUALITY = frozenset({EQUALS, DOUBLE_EQUALS})

_NAME_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def validate_label_key(key: str) -> None:
    """Raise ValueError unless ``key`` is a qualified name (``[prefix/]name``)."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix)):
        raise ValueError(f"invalid label key {key!r}: prefix must be a DNS subdomain")
    if not name or len(name) > 63 or not _NAME_RE.match(name):
        raise ValueError(
            f"invalid label key {key!r}: name must be 1-63 alphanumerics, '-', '_' or '.', "
            "starting and ending with an alphanumeric"
        )


def validate_label_value(value: str) -> None:
    if len(value) > 63 or not _VALUE_RE.match(value):
        raise ValueError(
            f"invalid label value {value!r}: at most 63 alphanumerics, '-', '_' or '.', "
            "starting and ending with an alphanumeric"
        )


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    @classmethod
    def new(cls, key: str, operator: str, values: Iterable[str] = ()) -> Requirement:
        """A validated requirement (apimachinery's ``NewRequirement``)."""
        validate_label_key(key)
        vals = tuple(values)
        if operator in (IN, NOT_IN):
            if not vals:
                raise ValueError(f"{key}: operator {operator!r} needs at least one value")
            vals = tuple(sorted(set(vals)))
        elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
            if len(vals) != 1:
                raise ValueError(f"{key}: operator {operator!r} needs exactly one value")
        elif operator in (EXISTS, DOES_NOT_EXIST):
            if vals:
                raise ValueError(f"{key}: operator {operator!r} takes no values")
        elif operator in (GREATER_THAN, LESS_THAN):
            if len(vals) != 1:
                raise ValueError(f"{key}: operator {operator!r} needs exactly one value")
            try:
                int(vals[0])
            except ValueError:
                raise ValueError(f"{key}: operator {operator!r} needs an integer value") from None
            return cls(key, operator, vals)
        else:
            raise ValueError(f"{key}: unknown operator {operator!r}")
        for v in vals:
            validate_label_value(v)
        return cls(key, operator, vals)

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        present = self.key in labels
        if op in (EQUALS, DOUBLE_EQUALS, IN):
            return present and labels[self.key] in self.values
        if op in (NOT_EQUALS, NOT_IN):
            return not present or labels[self.key] not in self.values
        if op == EXISTS:
            return present
        if op == DOES_NOT_EXIST:
            return not present
        if not present:
            return False
        try:
            have = int(labels[self.key])
        except ValueError:
            return False
        want = int(self.values[0])
        return have > want if op == GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return f"!{self.key}"
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({','.join(self.values)})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{self.values[0]}"


class Selector:
    """An AND of requirements; immutable. A selector of ``key=value`` requirements only (what
    ``selector_from_set`` makes, every controller's claim) matches with one dict comparison."""

    __slots__ = ("_requirements", "_nothing", "_pairs")

    def __init__(self, requirements: Iterable[Requirement] = (), nothing: bool = False) -> None:
        self._requirements = tuple(sorted(requirements, key=lambda r: r.key))
        self._nothing = nothing
        pairs = {r.key: r.values[0] for r in self._requirements if r.operator in _EQUALITY}
        self._pairs = pairs if len(pairs) == len(self._requirements) else None

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        return self._requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self._nothing:
            return False
        labels = labels or {}
        if self._pairs is not None:
            return self._pairs.items() <= labels.items()
        return all(r.matches(labels) for r in self._requirements)

    def empty(self) -> bool:
        """True when the selector has no requirements (and so selects everything)."""
        return not self._nothing and not self._requirements

    def add(self, *requirements: Requirement) -> Selector:
        return Selector(self._requirements + requirements, self._nothing)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self._requirements)

    def __repr__(self) -> str:
        return "Selector(<nothing>)" if self._nothing else f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return (self._requirements, self._nothing) == (other._requirements, other._nothing)

    def __hash__(self) -> int:
        return hash((self._requirements, self._nothing))


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


def everything() -> Selector:
    return EVERYTHING


def nothing() -> Selector:
    return NOTHING


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """A selector requiring every key=value of ``labels`` (empty set: everything)."""
    if not labels:
        return EVERYTHING
    return _selector_from_pairs(tuple(labels.items()))


@functools.lru_cache(maxsize=4096)
def _selector_from_pairs(pairs: tuple[tuple[str, str], ...]) -> Selector:
    """Selectors are immutable: one per label set, validated once (a controller builds the
    same job's selector on every pass)."""
    return Selector(Requirement.new(k, EQUALS, [v]) for k, v in pairs)


_EXPRESSION_OPERATORS = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
}


def label_selector_as_selector(label_selector: Mapping[str, Any] | None) -> Selector:
    """Convert a ``metav1.LabelSelector`` dict; None selects nothing, {} everything."""
    if label_selector is None:
        return NOTHING
    reqs: list[Requirement] = []
    for key, value in (label_selector.get("matchLabels") or {}).items():
        reqs.append(Requirement.new(key, EQUALS, [value]))
    for expr in label_selector.get("matchExpressions") or []:
        op_name = expr.get("operator")
        try:
            op = _EXPRESSION_OPERATORS[op_name]
        except KeyError:
            raise ValueError(f"{op_name!r} is not a valid label selector operator") from None
        reqs.append(Requirement.new(expr.get("key", ""), op, expr.get("values") or []))
    return Selector(reqs)


# ---- string parsing -------------------------------------------------------------

_TOKEN_RE = re.compile(r"\s*(==|!=|=|>|<|\(|\)|,|!|[^\s=!<>(),]+)")


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN_RE.match(text, pos)
        if not m:  # pragma: no cover - every non-space char forms some token
            raise ValueError(f"invalid label selector {text!r} at position {pos}")
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    def error(self, what: str) -> ValueError:
        return ValueError(f"invalid label selector {self.text!r}: {what}")

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def next(self) -> str | None:
        tok = self.peek()
        self.pos += 1
        return tok

    def parse(self) -> Selector:
        reqs: list[Requirement] = []
        if not self.tokens:
            return EVERYTHING
        while True:
            reqs.append(self.requirement())
            tok = self.next()
            if tok is None:
                return Selector(reqs)
            if tok != ",":
                raise self.error(f"expected ',' but found {tok!r}")

    def identifier(self, what: str) -> str:
        tok = self.next()
        if tok is None or tok in ("==", "!=", "=", ">", "<", "(", ")", ",", "!"):
            raise self.error(f"expected {what} but found {tok!r}")
        return tok

    def requirement(self) -> Requirement:
        try:
            if self.peek() == "!":
                self.next()
                return Requirement.new(self.identifier("a key"), DOES_NOT_EXIST)
            key = self.identifier("a key")
            op = self.peek()
            if op is None or op == ",":
                return Requirement.new(key, EXISTS)
            self.next()
            if op in ("=", "==", "!="):
                value = self.peek()
                if value is None or value == ",":
                    value = ""  # "a=" selects the empty value
                else:
                    value = self.identifier("a value")
                return Requirement.new(key, op, [value])
            if op in (">", "<"):
                value = self.identifier("an integer")
                return Requirement.new(key, GREATER_THAN if op == ">" else LESS_THAN, [value])
            if op in (IN, NOT_IN):
                return Requirement.new(key, op, self.value_set())
            raise self.error(f"unknown operator {op!r} after key {key!r}")
        except ValueError as exc:
            if str(exc).startswith("invalid label selector"):
                raise
            raise self.error(str(exc)) from None

    def value_set(self) -> list[str]:
        if self.next() != "(":
            raise self.error("expected '(' to open a value set")
        values: list[str] = []
        expect_value = True
        while True:
            tok = self.next()
            if tok is None:
                raise self.error("unterminated value set")
            if tok == ")":
                if expect_value and values:
                    values.append("")  # "in (a,)" includes the empty value
                return values
            if tok == ",":
                if expect_value:
                    values.append("")
                expect_value = True
                continue
            if not expect_value:
                raise self.error(f"expected ',' or ')' but found {tok!r}")
            if tok in ("=", "==", "!=", ">", "<", "(", "!"):
                raise self.error(f"unexpected {tok!r} in value set")
            values.append(tok)
            expect_value = False


def parse_selector(text: str | Selector | None) -> Selector:
    """Parse the string form of a label selector; raises ValueError on bad input."""
    if isinstance(text, Selector):
        return text
    if text is None:
        return EVERYTHING
    return _Parser(text).parse()


def labels_to_string(labels: Mapping[str, str]) -> str:
    """``a=b,c=d`` with keys sorted, as ``labels.Set.String()``."""
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))
