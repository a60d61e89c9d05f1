"""YAML request bodies read as kube-apiserver reads them: sigs.k8s.io/yaml over go-yaml v2.

kube-apiserver turns a YAML body into JSON before decoding it (``yaml.YAMLToJSON``): go-yaml v2
reads the first document into generic values, sigs.k8s.io/yaml makes them JSON-able and
``json.Marshal`` writes them. :func:`load` gives the value that JSON stands for, or
``YAMLBodyError`` with the message that pipeline gives. What it takes from each step:

- Aliases are expanded as go-yaml expands them, and go-yaml's bound on that (its fix for
  CVE-2019-11253, the "billion laughs") is applied as go-yaml applies it: every value decoded
  counts one operation, those decoded through an alias count as aliased, and once there are
  more than 1,000 operations and 100 aliased ones, the aliased share may not exceed 99% (up to
  400,000 operations, then falling linearly to 10% at 4,000,000): ``yaml: document contains
  excessive aliasing``. The count runs as the document is decoded, so a 638-byte bomb standing
  for 10^9 values stops after a few thousand. An alias inside its own anchor is ``yaml: anchor
  'x' value contains itself``; an unknown one ``yaml: unknown anchor 'x' referenced``.
- Plain scalars resolve by go-yaml v2's table (YAML 1.1 booleans such as ``yes``, ``0x``/``0o``/
  octal integers, ``1e3`` a float, base-60 numbers and timestamps left as text, integers beyond
  64 bits a float); ``!!binary`` is decoded to text; tags on collections are ignored; a merge key
  (``<<``) writes the merged keys into the mapping where it stands, over keys set before it (as
  v2 does).
- Map keys become strings as sigs.k8s.io/yaml converts them (integers, floats, booleans; any
  other is an error), and an infinite or NaN float is ``json: unsupported value: +Inf``.
- Nesting: go-yaml reads up to 10,000 levels, and the JSON decoder after it stops at 10,000
  (``deepjson.MAX_DEPTH``, raised as ``deepjson.JSONSyntaxError``). Events come from libyaml
  (PyYAML's C parser) and are composed here without recursion; libyaml stops at 1,000 levels,
  so YAML that is not JSON text is refused past that (D73; JSON text, what clients send even
  with a YAML content type, is read by the caller with the JSON decoder up to 10,000).

The operator bounds the YAML its users hand the tools with ``tf_operator.k8s.safeyaml`` (a cap
on the expanded size); this module emulates the server, so it applies go-yaml's rule instead,
and the two never share code. Both are held to one set of alias test vectors
(``test/support/yaml_alias_vectors.py``): what one refuses the other refuses.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Callable
from decimal import Decimal
from functools import partial
from typing import Any

import orjson
import yaml

from localcluster.apimachinery import deepjson

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# libyaml's nesting limit, kept for the pure-Python parser too (D73)
MAX_YAML_DEPTH = 1000

# go-yaml v2's alias bound (decode.go, allowedAliasRatio)
_ALIAS_RATIO_RANGE_LOW = 400_000
_ALIAS_RATIO_RANGE_HIGH = 4_000_000

_TAG = "tag:yaml.org,2002:"
_STR, _BINARY, _MERGE, _TIMESTAMP = (_TAG + t for t in ("str", "binary", "merge", "timestamp"))
_INT, _FLOAT, _BOOL, _NULL = (_TAG + t for t in ("int", "float", "bool", "null"))
_RESOLVABLE = {_STR, _BOOL, _INT, _FLOAT, _NULL, _TIMESTAMP}

# go-yaml v2's resolve table: plain scalars read as a value of their own
_WORDS: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON"), (_BOOL, True)),
    **dict.fromkeys(("true", "True", "TRUE"), (_BOOL, True)),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "off", "Off", "OFF"), (_BOOL, False)),
    **dict.fromkeys(("false", "False", "FALSE"), (_BOOL, False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (_NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (_FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (_FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (_FLOAT, -math.inf)),
}
_WORD_START = set("yYnNtTfFoO~")
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")
# go-yaml's timestamp formats (date, then optionally a time and a zone): text it keeps as text
_TIMESTAMP_TEXT = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"(?:[Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2})?)?"
)


class YAMLBodyError(ValueError):
    """A YAML body kube-apiserver's YAML-to-JSON step refuses; ``str(err)`` is its message."""


class _Node:
    """A composed node: ``kind`` is one of the ``yaml`` event classes' node kinds below; a
    scalar's ``value`` is its text, a collection's its children, an alias's its anchor's node."""

    __slots__ = ("anchor", "kind", "plain", "tag", "value")

    def __init__(self, kind: str, value: Any, tag: str | None = None, plain: bool = False) -> None:
        self.kind = kind
        self.value = value
        self.tag = tag
        self.plain = plain
        self.anchor = ""


_SCALAR, _SEQUENCE, _MAPPING, _ALIAS = "scalar", "sequence", "mapping", "alias"


def load(raw: bytes) -> Any:
    """The JSON value kube-apiserver makes of the YAML body ``raw`` (its first document; None
    when there is none). ``YAMLBodyError``, or ``deepjson.JSONSyntaxError`` for a value nested
    deeper than the JSON decoder takes, with the server's message."""
    root = _compose(raw)
    if root is None:
        return None
    value = _Decoder().decode(root)
    _check_floats(value)
    return value


def _where(err: yaml.MarkedYAMLError) -> str:
    """go-yaml's ``line N: `` prefix: the problem's line (1-based for a scanner error, as
    go-yaml counts), else the context's; nothing on the first line."""
    line = err.problem_mark.line if err.problem_mark is not None else 0
    if line:
        line += isinstance(err, yaml.scanner.ScannerError)
    elif err.context_mark is not None:
        line = err.context_mark.line
    return f"line {line}: " if line else ""


def _compose(raw: bytes) -> _Node | None:
    """The first document's node graph, built from the parser's events without recursion."""
    loader = _Loader(raw)
    try:
        return _compose_events(loader)
    except yaml.MarkedYAMLError as e:
        problem = e.problem or "unknown problem parsing YAML content"
        raise YAMLBodyError(f"yaml: {_where(e)}{problem}") from e
    except yaml.reader.ReaderError as e:  # not UTF-8, or a character YAML forbids
        raise YAMLBodyError(f"yaml: {e.reason}") from e
    except yaml.YAMLError as e:
        raise YAMLBodyError(f"yaml: {e}") from e
    finally:
        loader.dispose()


def _compose_events(loader: Any) -> _Node | None:
    anchors: dict[str, _Node] = {}
    open_nodes: list[_Node] = []
    root: _Node | None = None
    while loader.check_event():
        event = loader.get_event()
        if isinstance(event, yaml.DocumentEndEvent):
            break  # go-yaml reads the first document only
        node: _Node
        if isinstance(event, yaml.ScalarEvent):
            node = _Node(_SCALAR, event.value, event.tag, event.implicit[0])
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            if len(open_nodes) >= MAX_YAML_DEPTH:
                line = event.start_mark.line if event.start_mark is not None else 0
                where = f"line {line + 1}: " if line else ""
                raise YAMLBodyError(f"yaml: {where}exceeded maximum nesting depth")
            kind = _SEQUENCE if isinstance(event, yaml.SequenceStartEvent) else _MAPPING
            node = _Node(kind, [])
        elif isinstance(event, yaml.AliasEvent):
            name = event.anchor or ""
            target = anchors.get(name)
            if target is None:
                raise YAMLBodyError(f"yaml: unknown anchor '{name}' referenced")
            node = _Node(_ALIAS, target)
            node.anchor = name
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            open_nodes.pop()
            continue
        else:  # stream and document start
            continue
        anchor = getattr(event, "anchor", None)
        if anchor is not None and node.kind != _ALIAS:
            anchors[anchor] = node  # a later anchor of the same name wins, as in go-yaml
        if open_nodes:
            open_nodes[-1].value.append(node)
        else:
            root = node
        if node.kind in (_SEQUENCE, _MAPPING):
            open_nodes.append(node)
    return root


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    span = _ALIAS_RATIO_RANGE_HIGH - _ALIAS_RATIO_RANGE_LOW
    return 0.99 - 0.89 * ((decodes - _ALIAS_RATIO_RANGE_LOW) / span)


Sink = Callable[[Any], None]


class _Decoder:
    """go-yaml's decoder over a composed graph, with an explicit work stack: the same order of
    operations (so the alias bound trips where go-yaml's does), building JSON-able values."""

    def __init__(self) -> None:
        self.decodes = 1  # go-yaml counts the document node first
        self.aliased = 0
        self.alias_depth = 0
        self.active: set[int] = set()  # alias nodes being expanded
        self.work: list[Callable[[], None]] = []
        # the first key sigs.k8s.io/yaml cannot make a string, with its value: refused once
        # go-yaml has decoded the whole document, as sigs.k8s.io/yaml converts after it
        self.bad_key: tuple[Any, list[Any]] | None = None

    def decode(self, root: _Node) -> Any:
        out: list[Any] = []
        self.work.append(partial(self.visit, root, out.append, None, 0))
        while self.work:
            self.work.pop()()
        if self.bad_key is not None:
            key, value = self.bad_key
            kind = "uint64" if isinstance(key, int) else "%!s(<nil>)"
            raise YAMLBodyError(
                f"unsupported map key of type: {kind}, key: {_go_syntax(key, top=True)}, "
                f"value: {_go_syntax(value[0], top=True)}"
            )
        return out[0]

    def count(self) -> None:
        self.decodes += 1
        if self.alias_depth:
            self.aliased += 1
        if (
            self.aliased > 100
            and self.decodes > 1000
            and self.aliased / self.decodes > _allowed_alias_ratio(self.decodes)
        ):
            raise YAMLBodyError("yaml: document contains excessive aliasing")

    def visit(self, node: _Node, sink: Sink, into: dict[str, Any] | None, depth: int) -> None:
        """Decode ``node`` and hand its value to ``sink``; a mapping merged into ``into``
        writes its keys there instead."""
        self.count()
        if node.kind == _ALIAS:
            if id(node) in self.active:
                raise YAMLBodyError(f"yaml: anchor '{node.anchor}' value contains itself")
            self.active.add(id(node))
            self.alias_depth += 1
            self.work.append(partial(self.leave_alias, node))
            self.work.append(partial(self.visit, node.value, sink, into, depth))
            return
        if node.kind == _SCALAR:
            sink(_scalar(node))
            return
        if depth >= deepjson.MAX_DEPTH:
            # what the JSON decoder after go-yaml says of the JSON this would be
            raise deepjson.TooDeep(ord("{" if node.kind == _MAPPING else "["), 0)
        if node.kind == _SEQUENCE:
            items: list[Any] = []
            sink(items)
            for child in reversed(node.value):
                self.work.append(partial(self.visit, child, items.append, None, depth + 1))
            return
        mapping: dict[str, Any] = {} if into is None else into
        if into is None:
            sink(mapping)
        children = node.value
        for at in range(len(children) - 2, -1, -2):
            key, value = children[at], children[at + 1]
            if _is_merge(key):
                self.work.append(partial(self.merge, value, mapping, depth))
            else:
                self.work.append(partial(self.pair, key, value, mapping, depth))

    def leave_alias(self, node: _Node) -> None:
        self.alias_depth -= 1
        self.active.discard(id(node))

    def pair(self, key: _Node, value: _Node, mapping: dict[str, Any], depth: int) -> None:
        decoded: list[Any] = []
        self.work.append(partial(self.member, decoded, value, mapping, depth))
        self.work.append(partial(self.visit, key, decoded.append, None, depth + 1))

    def member(self, decoded: list[Any], value: _Node, mapping: dict[str, Any], depth: int) -> None:
        key = _json_key(decoded[0])
        sink: Sink
        if key is not None:
            sink = partial(mapping.__setitem__, key)
        else:
            refused: list[Any] = []
            sink = refused.append
            if self.bad_key is None:
                self.bad_key = (decoded[0], refused)
        self.work.append(partial(self.visit, value, sink, None, depth + 1))

    def merge(self, node: _Node, mapping: dict[str, Any], depth: int) -> None:
        """A merge key's value: a mapping, an alias of one, or a sequence of those (the last
        first, so earlier ones win); the sequence itself is not a decode of its own."""
        if node.kind == _SEQUENCE:
            parts = node.value
        elif node.kind in (_MAPPING, _ALIAS):
            parts = [node]
        else:
            raise YAMLBodyError("yaml: map merge requires map or sequence of maps as the value")
        for part in parts:  # pushed first to last, so decoded last to first
            target = part.value if part.kind == _ALIAS else part
            if target.kind != _MAPPING:
                raise YAMLBodyError("yaml: map merge requires map or sequence of maps as the value")
            self.work.append(partial(self.visit, part, _unused, mapping, depth))


def _unused(value: Any) -> None:
    """The sink of a mapping merged into another: its keys went there already."""


def _is_merge(node: _Node) -> bool:
    return (
        node.kind == _SCALAR
        and node.value == "<<"
        and ((node.plain and node.tag is None) or node.tag == _MERGE)
    )


def _scalar(node: _Node) -> Any:
    """A scalar's value as go-yaml v2 decodes it into an ``interface{}``."""
    text: str = node.value
    tag = node.tag
    if tag is None and not node.plain:
        return text  # quoted
    if tag == _BINARY:
        try:
            data = base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
        except (binascii.Error, ValueError) as e:
            raise YAMLBodyError("yaml: !!binary value contains invalid base64 data") from e
        return data.decode("utf-8", "replace")
    if tag is not None and tag not in _RESOLVABLE:
        return text  # an unknown tag, or a non-specific one: the text
    resolved_tag, value = _resolve(text, tag)
    if tag is None or resolved_tag == tag or tag == _STR:
        return value
    if tag == _FLOAT and resolved_tag == _INT:
        return float(value)
    short = resolved_tag.replace(_TAG, "!!")
    raise YAMLBodyError(f"yaml: cannot decode {short} `{text}` as a {tag.replace(_TAG, '!!')}")


def _resolve(text: str, tag: str | None) -> tuple[str, Any]:
    """go-yaml v2's ``resolve``: the tag and value of a scalar's text (a timestamp stays text:
    go-yaml hands an ``interface{}`` the text for one)."""
    if tag == _STR:
        return _STR, text
    if not text:
        return _NULL, None
    first = text[0]
    numeric = first in "+-" or "0" <= first <= "9"
    if first in _WORD_START or first == "." or numeric:
        word = _WORDS.get(text)
        if word is not None:
            return word
    if first == "." and _DOT_FLOAT.fullmatch(text) and not math.isinf(float(text)):
        return _FLOAT, float(text)
    if numeric:
        if tag in (None, _TIMESTAMP) and _TIMESTAMP_TEXT.fullmatch(text):
            return _TIMESTAMP, text
        plain = text.replace("_", "")
        number = _go_int(plain)
        if number is not None:
            return _INT, number
        if _YAML_FLOAT.fullmatch(plain) and not math.isinf(float(plain)):
            return _FLOAT, float(plain)
    return _STR, text


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, then ``ParseUint``: None when neither reads it."""
    match = _GO_INT.fullmatch(text)
    if match is None:
        return None
    sign, digits = match.groups()
    if len(digits) > 1 and digits[0] == "0" and digits[1] in "0123456789":
        value = int(digits, 8)
    else:
        value = int(digits, 0)
    if sign == "-":
        value = -value
    if -(2**63) <= value < 2**63 or (sign == "" and value < 2**64):
        return value
    return None


def _json_key(key: Any) -> str | None:
    """A map key as sigs.k8s.io/yaml makes it a JSON object's key; None for a null or uint64
    key, which it refuses."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int) and -(2**63) <= key < 2**63:
        return str(key)
    if isinstance(key, float):
        if math.isnan(key):
            return ".nan"
        if math.isinf(key):
            return ".inf" if key > 0 else "-.inf"
        return _go_g(_float32_digits(key))
    if isinstance(key, dict | list):
        raise YAMLBodyError(f"yaml: invalid map key: {_go_syntax(key, top=True)}")
    return None  # null, or beyond int64: go-yaml's uint64


def _float32_digits(value: float) -> str:
    """The shortest digits that read back as the same float32 as ``value``."""
    single = struct.unpack("f", struct.pack("f", value))[0]
    for precision in range(1, 10):
        text = f"{single:.{precision - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    return text


def _go_syntax(value: Any, top: bool = False) -> str:
    """Go's ``%#v`` of a value go-yaml decoded into an ``interface{}`` (a small recursion:
    only the key or value named in an error message is printed)."""
    if value is None:
        return "<nil>" if top else "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:#x}" if value >= 2**63 else str(value)  # uint64 prints in hex
    if isinstance(value, float):
        return _go_g(repr(value)) if math.isfinite(value) else _non_finite(value)
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_syntax(item) for item in value) + "}"
    pairs = (f"{orjson.dumps(k).decode()}:{_go_syntax(v)}" for k, v in sorted(value.items()))
    return "map[interface {}]interface {}{" + ", ".join(pairs) + "}"


def _go_g(text: str) -> str:
    """The shortest digits ``text`` of a finite float as Go's ``%g`` (precision -1) writes
    them: ``%e`` with two exponent digits below 1e-4 or from 1e6 on."""
    sign, digits, exponent = Decimal(text).normalize().as_tuple()
    places = "".join(map(str, digits))
    exp = len(places) + int(exponent) - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:  # %e, with at least two exponent digits
        mantissa = places[0] + ("." + places[1:] if len(places) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{minus}0.{'0' * (-exp - 1)}{places}"
    whole = places[: exp + 1].ljust(exp + 1, "0")
    return f"{minus}{whole}" + ("." + places[exp + 1 :] if len(places) > exp + 1 else "")


def _check_floats(value: Any) -> None:
    """``json.Marshal``'s refusal of an infinite or NaN float, without recursion."""
    work = [value]
    while work:
        item = work.pop()
        if isinstance(item, dict):
            work.extend(item.values())
        elif isinstance(item, list):
            work.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise YAMLBodyError(f"json: unsupported value: {_non_finite(item)}")


def _non_finite(value: float) -> str:
    """Go's name for an infinite or NaN float."""
    return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
