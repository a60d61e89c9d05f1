"""JSON for documents nested deeper than orjson goes: iterative, so no depth is too deep.

kube-apiserver decodes JSON nested up to 10,000 levels, so an object it stores (a custom
resource's preserved unknown fields can nest freely) can be deeper than orjson handles:
``orjson.loads`` stops at 1,024 levels and ``orjson.dumps`` at 254, and the standard library's
codec recurses, stopping near the interpreter's recursion limit. The client uses orjson and
falls back to :func:`loads` and :func:`dumps` here when orjson refuses a document for its depth
alone, so an informer never chokes on a list holding one such object and a status write of
such an object goes out. Both keep an explicit stack instead of recursing; they are slower
than orjson and used only for those documents. :func:`nesting_depth` measures a decoded
document the same way; :func:`deeper_than` only tells whether it passes a limit, cheaply (a
job's spec is checked on every pass).
"""

from __future__ import annotations

import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # public since 2.6, untyped
from json.encoder import encode_basestring
from typing import Any

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = (("true", True), ("false", False), ("null", None))


class _Text(str):
    """Already encoded text on the encoder's work stack (a ``str`` subclass, so told apart
    from a string value by its type)."""


def dumps(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON (dicts with string keys, lists, tuples, strings,
    integers, finite floats, booleans, None), whatever its depth."""
    parts: list[str] = []
    work: list[Any] = [value]
    while work:
        item = work.pop()
        if type(item) is _Text:
            parts.append(item)
        elif isinstance(item, dict):
            seq: list[Any] = [_Text("{")]
            for n, (key, child) in enumerate(item.items()):
                if not isinstance(key, str):
                    raise TypeError(f"keys must be strings, not {type(key).__name__}")
                seq += [_Text(("," if n else "") + encode_basestring(key) + ":"), child]
            seq.append(_Text("}"))
            work.extend(reversed(seq))
        elif isinstance(item, list | tuple):
            seq = [_Text("[")]
            for n, child in enumerate(item):
                if n:
                    seq.append(_Text(","))
                seq.append(child)
            seq.append(_Text("]"))
            work.extend(reversed(seq))
        elif isinstance(item, str):
            parts.append(encode_basestring(item))
        elif item is True or item is False or item is None:
            parts.append("true" if item else "false" if item is False else "null")
        elif isinstance(item, int):
            parts.append(str(int(item)))
        elif isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                raise ValueError(f"{item} is not valid JSON")
            parts.append(float.__repr__(item))
        else:
            raise TypeError(f"{type(item).__name__} is not JSON serializable")
    return "".join(parts).encode("utf-8")


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _expect(text: str, pos: int, char: str) -> int:
    if not text.startswith(char, pos):
        raise ValueError(f"expected {char!r} at offset {pos}")
    return _skip(text, pos + 1)


def _key(text: str, pos: int) -> tuple[str, int]:
    """An object key and the position of its value."""
    if not text.startswith('"', pos):
        raise ValueError(f"expected a string key at offset {pos}")
    key, end = scanstring(text, pos + 1)
    return key, _expect(text, _skip(text, end), ":")


def loads(data: bytes | str) -> Any:
    """Decode one JSON document, whatever its depth (ValueError when it is not JSON)."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    pos = _skip(text, 0)
    stack: list[tuple[dict[str, Any] | list[Any], str | None]] = []
    while True:
        # one value at ``pos``: a container opened (pushed), or a complete value
        char = text[pos : pos + 1]
        value: Any
        if char == "{":
            pos = _skip(text, pos + 1)
            if text.startswith("}", pos):
                value, pos = {}, pos + 1
            else:
                key, pos = _key(text, pos)
                stack.append(({}, key))
                continue
        elif char == "[":
            pos = _skip(text, pos + 1)
            if text.startswith("]", pos):
                value, pos = [], pos + 1
            else:
                stack.append(([], None))
                continue
        elif char == '"':
            value, pos = scanstring(text, pos + 1)
        else:
            number = _NUMBER.match(text, pos)
            if number:
                literal = number.group()
                value = float(literal) if number.group(1) or number.group(2) else int(literal)
                pos = number.end()
            else:
                for word, meaning in _LITERALS:
                    if text.startswith(word, pos):
                        value, pos = meaning, pos + len(word)
                        break
                else:
                    raise ValueError(f"no JSON value at offset {pos}")
        # hand the value to its container; close the containers it completes
        while True:
            pos = _skip(text, pos)
            if not stack:
                if pos != len(text):
                    raise ValueError(f"extra data at offset {pos}")
                return value
            container, slot = stack[-1]
            if isinstance(container, list):
                container.append(value)
                closer = "]"
            else:
                assert slot is not None
                container[slot] = value
                closer = "}"
            if text.startswith(",", pos):
                pos = _skip(text, pos + 1)
                if isinstance(container, dict):
                    key, pos = _key(text, pos)
                    stack[-1] = (container, key)
                break
            pos = _expect(text, pos, closer)
            stack.pop()
            value = container


def deepest(value: Any) -> tuple[int, tuple[str | int, ...]]:
    """Levels of objects and arrays in a decoded document (a scalar is 0, ``{}`` is 1), and
    the path (keys and indexes) to a container that deep."""
    best: tuple[int, tuple[str | int, ...]] = (0, ())
    work: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while work:
        item, path = work.pop()
        if isinstance(item, dict):
            children: Any = item.items()
        elif isinstance(item, list | tuple):
            children = enumerate(item)
        else:
            continue
        if len(path) + 1 > best[0]:
            best = (len(path) + 1, path)
        work.extend((child, (*path, key)) for key, child in children)
    return best


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` levels (as :func:`deepest` counts them):
    the cheap check for the common case, with no path kept and no scalar visited."""
    containers = (dict, list, tuple)
    work: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, containers) else []
    while work:
        item, depth = work.pop()
        if depth > limit:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, containers):
                work.append((child, depth + 1))
    return False


def nesting_depth(value: Any) -> int:
    """Levels of objects and arrays in a decoded document (see :func:`deepest`)."""
    return deepest(value)[0]
