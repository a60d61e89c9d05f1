"""JSON decoding tuned for large List bodies.

Two things make ``json.loads`` of a 10,000-pod list slow and fat in CPython:

* The cyclic garbage collector runs over and over while hundreds of thousands
  of new dicts and lists are created, each pass walking everything allocated
  so far. None of them can be garbage yet, so collection is paused during a
  large decode (process-wide, counted, so concurrent decodes nest safely).
* Every string value becomes its own object, though most values repeat
  across items ("Running", "True", image names, timestamps). Large bodies
  are decoded with a per-call memo that makes equal values share one string,
  which cuts the memory of a decoded pod list by about a third.

Small bodies (single objects, watch events) take the plain path.

:func:`load_stream` decodes a List as it arrives: the top-level object is
walked by hand and each element of ``items`` is decoded on its own, so the
raw body never sits in memory whole next to its decoded form.
"""

from __future__ import annotations

import codecs
import gc
import json
import threading
from collections.abc import Callable
from typing import Any

# Bodies at least this large get the memo and the GC pause.
LARGE_BODY = 256 * 1024

_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


def _pause_gc() -> None:
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1


def _resume_gc() -> None:
    global _gc_depth
    with _gc_lock:
        _gc_depth -= 1
        if _gc_depth == 0 and _gc_was_enabled:
            gc.enable()


def loads(data: bytes | str) -> Any:
    """Decode JSON; large bodies share repeated string values and skip GC passes."""
    if len(data) < LARGE_BODY:
        return json.loads(data)
    memo: dict[str, str] = {}
    share = memo.setdefault

    def make_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return {k: share(v, v) if v.__class__ is str else v for k, v in pairs}

    _pause_gc()
    try:
        return json.loads(data, object_pairs_hook=make_object)
    finally:
        _resume_gc()


_WHITESPACE = " \t\n\r"
_NUMBER_CHARS = "0123456789+-.eE"


class _Reader:
    """A text window over a byte source, refilled on demand, for incremental decoding."""

    def __init__(self, read: Callable[[], bytes]) -> None:
        self._read = read
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.eof = False

    def fill(self) -> bool:
        """Append the next chunk; False at end of input."""
        if self.eof:
            return False
        chunk = self._read()
        if not chunk:
            self.eof = True
            self.buf = self.buf[self.pos :] + self._utf8.decode(b"", final=True)
        else:
            self.buf = self.buf[self.pos :] + self._utf8.decode(chunk)
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next non-whitespace character ("" at end of input), not consumed."""
        while True:
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in _WHITESPACE:
                pos += 1
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self.fill():
                return ""

    def expect(self, char: str) -> None:
        got = self.peek()
        if got != char:
            raise ValueError(f"malformed JSON list: expected {char!r}, found {got!r}")
        self.pos += 1

    def value(self, decoder: json.JSONDecoder) -> Any:
        """Decode one complete JSON value at the current position."""
        self.peek()
        while True:
            try:
                obj, end = decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                if self.fill():
                    continue
                raise
            # A number may be cut short by the window's edge ("12" of "125", "-4" of
            # "-4.5"): accept it only once a character that cannot continue it follows.
            if (
                obj.__class__ in (int, float)
                and (end == len(self.buf) or self.buf[end] in _NUMBER_CHARS)
                and self.fill()
            ):
                continue
            self.pos = end
            return obj


def load_stream(read: Callable[[], bytes]) -> Any:
    """Decode a JSON object from successive chunks, streaming the ``items`` array.

    ``read()`` returns the next chunk of bytes, b"" at the end. Anything that is
    not an object falls back to decoding the whole input at once.
    """
    memo: dict[str, str] = {}
    share = memo.setdefault

    # Each raw_decode call has its own key memo, so keys are shared here too.
    def make_shared_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return {share(k, k): share(v, v) if v.__class__ is str else v for k, v in pairs}

    decoder = json.JSONDecoder(object_pairs_hook=make_shared_object)
    reader = _Reader(read)
    _pause_gc()
    try:
        if reader.peek() != "{":
            while reader.fill():
                pass
            return loads(reader.buf[reader.pos :])
        reader.expect("{")
        result: dict[str, Any] = {}
        if reader.peek() == "}":
            reader.pos += 1
            return result
        while True:
            key = reader.value(decoder)
            reader.expect(":")
            if key == "items" and reader.peek() == "[":
                result[key] = _read_array(reader, decoder)
            else:
                result[key] = reader.value(decoder)
            sep = reader.peek()
            reader.pos += 1
            if sep == "}":
                return result
            if sep != ",":
                raise ValueError(f"malformed JSON list: expected ',' or '}}', found {sep!r}")
    finally:
        _resume_gc()


def _read_array(reader: _Reader, decoder: json.JSONDecoder) -> list[Any]:
    reader.expect("[")
    items: list[Any] = []
    if reader.peek() == "]":
        reader.pos += 1
        return items
    while True:
        items.append(reader.value(decoder))
        sep = reader.peek()
        reader.pos += 1
        if sep == "]":
            return items
        if sep != ",":
            raise ValueError(f"malformed JSON list: expected ',' or ']', found {sep!r}")
