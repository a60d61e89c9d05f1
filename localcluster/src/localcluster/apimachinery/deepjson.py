"""JSON as kube-apiserver's decoder reads it, at any depth it accepts: the slow path.

kube-apiserver reads a JSON body with Go's ``encoding/json`` scanner (also vendored as
sigs.k8s.io/json), which takes arrays and objects nested up to ``MAX_DEPTH`` (10,000) levels and
refuses the next with ``invalid character '{' exceeded max depth``. The fast codecs stop far
sooner: ``orjson.loads`` at 1,024 levels, ``json.loads`` and ``json.dumps`` near the interpreter's
recursion limit, ``orjson.dumps`` at 254. So the request path keeps its fast codecs and comes
here only when they give up: :func:`loads` for a body the fast parsers refused (too deep, or
malformed: its verdict and message are then Go's), :func:`dumps` for an object too deep to
encode. Both keep an explicit stack instead of recursing. They cost nothing for ordinary bodies,
which never reach them.

The operator has its own iterative codec (``tf_operator.k8s.client.deepjson``, a client's
needs); the local cluster never imports the operator, and this decoder differs in what it is
for: Go's verdicts and messages, and the server's float and integer conventions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, cast

MAX_DEPTH = 10_000  # encoding/json's maxNestingDepth

_WHITESPACE = re.compile(rb"[ \t\r\n]*")  # the only whitespace Go's scanner skips
# a whole JSON string, and its longest well-formed prefix (to find where a bad one goes wrong)
_STRING = re.compile(rb'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_STRING_PREFIX = re.compile(rb'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {ord("t"): (b"true", True), ord("f"): (b"false", False), ord("n"): (b"null", None)}
_QUOTED = {ord("'"): "'\\''", ord('"'): "'\"'"}
_OBJECT, _ARRAY = 0x7B, 0x5B
_CLOSE = {_OBJECT: 0x7D, _ARRAY: 0x5D}
_HEX = frozenset(b"0123456789abcdefABCDEF")
_GO_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r"}


class JSONSyntaxError(ValueError):
    """A body Go's JSON scanner refuses; ``str(err)`` is its message."""


class TooDeep(JSONSyntaxError):
    """Nesting beyond ``MAX_DEPTH``; ``offset`` is where the first level too many opens."""

    def __init__(self, opening: int, offset: int) -> None:
        super().__init__(f"invalid character {quote_char(opening)} exceeded max depth")
        self.offset = offset


def quote_char(c: int) -> str:
    """A byte as Go's scanner names it in a message (``'x'``, ``'\\n'``, ``'\\u00a0'``)."""
    if c in _QUOTED:
        return _QUOTED[c]
    if c in _GO_ESCAPES:
        return f"'{_GO_ESCAPES[c]}'"
    if c == 0x5C:
        return "'\\\\'"
    text = chr(c)
    if text.isprintable():
        return f"'{text}'"
    return f"'\\x{c:02x}'" if c < 0x80 else f"'\\u{c:04x}'"


def _invalid(c: int, context: str) -> JSONSyntaxError:
    return JSONSyntaxError(f"invalid character {quote_char(c)} {context}")


def _end() -> JSONSyntaxError:
    return JSONSyntaxError("unexpected end of JSON input")


class _Container:
    """An array or object being read; for an object, the key whose value comes next."""

    __slots__ = ("close", "key", "value")

    def __init__(self, opening: int) -> None:
        self.value: dict[str, Any] | list[Any] = {} if opening == _OBJECT else []
        self.close = _CLOSE[opening]
        self.key = ""

    def add(self, value: Any) -> None:
        if isinstance(self.value, dict):
            self.value[self.key] = value
        else:
            self.value.append(value)


def loads(raw: bytes, parse_float: Callable[[str], Any] = float, max_depth: int = MAX_DEPTH) -> Any:
    """The value of the JSON text ``raw``, read as Go's scanner reads it (nesting up to
    ``max_depth``; only space, tab, CR and LF as whitespace; invalid UTF-8 in a string read as
    U+FFFD), integers as Python ints and other numbers through ``parse_float``.
    ``JSONSyntaxError`` with Go's message otherwise."""
    return _Reader(raw, parse_float, max_depth).read()


class _Reader:
    def __init__(self, raw: bytes, parse_float: Callable[[str], Any], max_depth: int) -> None:
        self.raw = raw
        self.pos = 0
        self.parse_float = parse_float
        self.max_depth = max_depth

    def skip(self) -> int:
        """Skip whitespace; the next byte (-1 at the end)."""
        self.pos = _WHITESPACE.match(self.raw, self.pos).end()  # type: ignore[union-attr]  # the pattern matches the empty string
        return self.raw[self.pos] if self.pos < len(self.raw) else -1

    def read(self) -> Any:
        document = _Container(_ARRAY)  # holds the top-level value
        stack: list[_Container] = []
        c: int | None = self.skip()
        while c is not None:
            # a value starts at c: a scalar, or an array or object (open until its end)
            parent = stack[-1] if stack else document
            if c == -1:
                raise _end()
            if c in _CLOSE:
                if len(stack) >= self.max_depth:
                    raise TooDeep(c, self.pos)
                self.pos += 1
                container = _Container(c)
                parent.add(container.value)
                c = self.skip()
                if c != container.close:
                    stack.append(container)
                    if c_is_object(container):
                        container.key = self.key(c)
                        c = self.skip()
                    continue
                self.pos += 1
            else:
                parent.add(self.scalar(c))
            c = self.next_value(stack)
        return cast(list[Any], document.value)[0]

    def next_value(self, stack: list[_Container]) -> int | None:
        """After a value: close the containers that end here; the byte where the next value
        starts (its key read when it is an object member), or None at the end of the text."""
        while True:
            c = self.skip()
            if not stack:
                if c != -1:
                    raise _invalid(c, "after top-level value")
                return None
            top = stack[-1]
            if c == top.close:
                self.pos += 1
                stack.pop()
                continue
            if c == 0x2C:  # ,
                self.pos += 1
                c = self.skip()
                if c_is_object(top):
                    top.key = self.key(c)
                    c = self.skip()
                return c
            if c == -1:
                raise _end()
            raise _invalid(
                c, "after object key:value pair" if c_is_object(top) else "after array element"
            )

    def key(self, c: int) -> str:
        """An object's key starting at ``c``, and the colon after it."""
        if c == -1:
            raise _end()
        if c != 0x22:
            raise _invalid(c, "looking for beginning of object key string")
        key = self.string()
        c = self.skip()
        if c == -1:
            raise _end()
        if c != 0x3A:
            raise _invalid(c, "after object key")
        self.pos += 1
        return key

    def byte(self, at: int) -> int:
        """The byte at ``at``; past the end a space, as Go's scanner feeds one at the end of
        the input (so a cut-off literal reads ``invalid character ' ' in literal true``)."""
        return self.raw[at] if at < len(self.raw) else 0x20

    def scalar(self, c: int) -> Any:
        if c == 0x22:
            return self.string()
        if c == 0x2D or 0x30 <= c <= 0x39:
            return self.number()
        literal = _LITERALS.get(c)
        if literal is None:
            raise _invalid(c, "looking for beginning of value")
        text, value = literal
        for n, expected in enumerate(text):
            got = self.byte(self.pos + n)
            if got != expected:
                word = text.decode()
                raise _invalid(got, f"in literal {word} (expecting {quote_char(expected)})")
        self.pos += len(text)
        return value

    def string(self) -> str:
        raw, start = self.raw, self.pos
        match = _STRING.match(raw, start)
        if match is None:
            at = _STRING_PREFIX.match(raw, start).end()  # type: ignore[union-attr]  # it matches the opening quote
            if at >= len(raw):
                raise _end()
            if raw[at] != 0x5C:  # a control character
                raise _invalid(raw[at], "in string literal")
            if self.byte(at + 1) != ord("u"):
                raise _invalid(self.byte(at + 1), "in string escape code")
            bad = next(b for b in map(self.byte, range(at + 2, at + 6)) if b not in _HEX)
            raise _invalid(bad, "in \\u hexadecimal character escape")
        self.pos = match.end()
        text = raw[start : self.pos].decode("utf-8", "replace")
        return json.decoder.scanstring(text, 1)[0]  # type: ignore[attr-defined,no-any-return]  # public since 2.6, untyped

    def number(self) -> Any:
        raw, start = self.raw, self.pos
        match = _NUMBER.match(raw, start)
        if match is None:  # a minus sign without digits
            raise _invalid(self.byte(start + 1), "in numeric literal")
        end = match.end()
        fraction, exponent = match.group(1), match.group(2)
        after = self.byte(end)
        if after == 0x2E and fraction is None and exponent is None:
            raise _invalid(self.byte(end + 1), "after decimal point in numeric literal")
        if after in (0x45, 0x65) and exponent is None:  # E e
            at = end + 1 + (self.byte(end + 1) in (0x2B, 0x2D))
            raise _invalid(self.byte(at), "in exponent of numeric literal")
        self.pos = end
        text = raw[start:end].decode()
        if fraction is None and exponent is None:
            return int(text)
        return self.parse_float(text)


def c_is_object(container: _Container) -> bool:
    return isinstance(container.value, dict)


class _Text(str):
    """Encoded text on the work stack of :func:`dumps` (told apart from a value by its type)."""


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return key if isinstance(key, str) else str(key)


def dumps(obj: Any) -> bytes:
    """``json.dumps(obj, separators=(",", ":")).encode()`` with an explicit stack instead of
    recursion (for a document too deep for the standard encoder)."""
    scalar = json.JSONEncoder(separators=(",", ":")).encode
    parts: list[str] = []
    work: list[Any] = [obj]
    while work:
        item = work.pop()
        if type(item) is _Text:
            parts.append(item)
        elif isinstance(item, dict):
            seq: list[Any] = [_Text("{")]
            for n, (key, value) in enumerate(item.items()):
                seq += [_Text(("," if n else "") + scalar(_key(key)) + ":"), value]
            work.extend(reversed([*seq, _Text("}")]))
        elif isinstance(item, list | tuple):
            seq = [_Text("[")]
            for n, value in enumerate(item):
                seq += [_Text(","), value] if n else [value]
            work.extend(reversed([*seq, _Text("]")]))
        else:
            parts.append(scalar(item))
    return "".join(parts).encode()
