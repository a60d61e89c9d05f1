"""Base64 as Go's ``encoding/base64`` reads it, for the errors the real server gives.

Go decodes in quanta of four characters, skipping line breaks, and reports the first problem
as ``illegal base64 data at input byte N`` with its own rule for N (a bad character, a
quantum cut short, padding in the wrong place, or anything after the padding).
``corrupt_at`` gives that N, or None when Go accepts the text; ``decode`` then decodes it.
"""

from __future__ import annotations

import base64
import string

_STD = frozenset(string.ascii_letters + string.digits + "+/")
_URL = frozenset(string.ascii_letters + string.digits + "-_")
_LINE_BREAKS = "\r\n"


class CorruptInput(ValueError):
    """Go's ``base64.CorruptInputError``; ``str(err)`` is its message."""

    def __init__(self, at: int) -> None:
        super().__init__(f"illegal base64 data at input byte {at}")
        self.at = at


def decode(text: str, url: bool = False, padded: bool = True) -> bytes:
    """StdEncoding (or, with ``url`` and not ``padded``, RawURLEncoding); ``CorruptInput``."""
    at = corrupt_at(text, url, padded)
    if at is not None:
        raise CorruptInput(at)
    clean = text.replace("\r", "").replace("\n", "")
    clean += "=" * (-len(clean) % 4)
    return base64.urlsafe_b64decode(clean) if url else base64.b64decode(clean)


def corrupt_at(text: str, url: bool = False, padded: bool = True) -> int | None:
    """Where Go's decoder stops with an error, or None."""
    alphabet = _URL if url else _STD
    pos = 0
    while True:
        pos, error, done = _quantum(text, pos, alphabet, padded)
        if error is not None or done:
            return error


def _quantum(
    text: str, pos: int, alphabet: frozenset[str], padded: bool
) -> tuple[int, int | None, bool]:
    """One four-character quantum from ``pos``: (next position, error index, end reached)."""
    j = 0
    while j < 4:
        if pos == len(text):
            if j == 0:
                return pos, None, True
            if j == 1 or padded:
                return pos, pos - j, True
            return pos, None, True
        char = text[pos]
        pos += 1
        if char in alphabet:
            j += 1
            continue
        if char in _LINE_BREAKS:
            continue
        if char != "=" or not padded or j < 2:
            return pos, pos - 1, True
        if j == 2:  # "==" expected: the second "=" must follow (after any line breaks)
            pos = _skip_line_breaks(text, pos)
            if pos == len(text):
                return pos, len(text), True
            if text[pos] != "=":
                return pos, pos - 1, True
            pos += 1
        pos = _skip_line_breaks(text, pos)
        return pos, (pos if pos < len(text) else None), True
    return pos, None, False


def _skip_line_breaks(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _LINE_BREAKS:
        pos += 1
    return pos
