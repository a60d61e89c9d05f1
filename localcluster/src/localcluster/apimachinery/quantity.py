"""``resource.Quantity`` as the API server decodes and re-encodes it.

``parse`` gives a quantity's exact value (``Decimal``) or raises ``QuantityError`` with
apimachinery's message; ``canonical`` gives the string the API server stores and returns for
it. Both follow apimachinery's ``ParseQuantity`` scanner and ``Quantity.String``:

- a value is kept exactly down to nano units; anything finer is rounded up (away from zero) to
  the next nano (``0.1n`` is ``1n``); a binary-suffixed value is capped at 2^63-1;
- the format (suffix family) is the one the text used: binary (``Ki``..``Ei``), decimal
  (``n``..``E``, or none) or an exponent (``e3``, ``E-3``);
- the canonical string has an integer mantissa and the largest suffix of that family that
  loses nothing (``1000m`` is ``1``, ``0.5`` is ``500m``, ``1.5Gi`` is ``1536Mi``, ``1.5e3`` is
  ``1500``); a binary value below 1024 in magnitude, or with a fraction, is written in decimal;
- text that already looks canonical is kept as written, sign and leading zeros included
  (``+1``, ``01``, ``1.500k``), exactly where apimachinery's int64 fast path keeps it;
- a decimal exponent above 18 has no suffix, and apimachinery then drops it (``1000E`` comes
  back as ``1``): kept, since clients see what the real server writes.

Parsing and canonical forms are cached by text (a cluster uses few distinct quantities).

A JSON number is a quantity too: Go hands the decoder the number as written, so a float from a
request body carries its literal text (``JSONFloat``); a float without one (from YAML, or from
an in-process caller) is read as Go's ``encoding/json`` writes a float64.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

SPLIT_RE_TEXT = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE_TEXT}'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
NUMERIC_WRONG = "unable to parse numeric part of quantity"

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
_DECIMAL_SUFFIXES = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = {e // 10: s for s, e in _BINARY_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_GO_INT = re.compile(r"^[+-]?[0-9]+$")
_MAX_INT64_DIGITS = 18  # apimachinery's maxInt64Factors: digits that always fit an int64
_INT64_MAX = 2**63 - 1
_NANO = -9  # the smallest exponent a quantity keeps
_NOT_A_NUMBER = "{}"  # what the decoder hands a Quantity for an object: never a quantity


class QuantityError(ValueError):
    """The text is not a quantity; ``str(err)`` is apimachinery's message."""


class JSONFloat(float):
    """A JSON number with a fraction or an exponent that remembers its text as written."""

    literal: str

    def __new__(cls, literal: str) -> JSONFloat:
        number = super().__new__(cls, literal)
        number.literal = literal
        return number


@dataclass(frozen=True)
class Quantity:
    """A parsed quantity: ``coefficient * 10**exponent``, its format, and the text it keeps
    verbatim (None when it is written in canonical form)."""

    coefficient: int
    exponent: int
    format: str
    kept: str | None = None

    @property
    def value(self) -> Decimal:
        return Decimal(f"{self.coefficient}E{self.exponent}")

    def __str__(self) -> str:
        return self.kept if self.kept is not None else _canonical_text(self)


def parse(value: Any) -> Decimal:
    """The exact value of a quantity given as a JSON string or number."""
    return parse_quantity(value).value


def canonical(value: Any) -> str:
    """The string the API server stores for this JSON value of a ``Quantity`` field."""
    return _canonical(_json_text(value).strip())


def format_value(value: Decimal, fmt: str = DECIMAL_SI) -> str:
    """``Quantity.String()`` of an exact value kept in format ``fmt`` (a sum of quantities is
    kept in its first operand's format)."""
    sign, digits, exponent = value.normalize().as_tuple()
    coefficient = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    return _canonical_text(Quantity(coefficient, int(exponent), fmt))


def text(value: Any) -> str:
    """How a quantity shows in an error message: its canonical string."""
    return canonical(value)


def parse_quantity(value: Any) -> Quantity:
    """A JSON value as ``Quantity.UnmarshalJSON`` reads it; ``QuantityError`` when it is none."""
    return _parse_text(_json_text(value).strip())


def _json_text(value: Any) -> str:
    """The text the Go decoder hands a Quantity for this JSON value: a string as it stands in
    the JSON, so a control character (which JSON escapes) reaches it as a backslash."""
    if isinstance(value, str):
        return "\\" if any(c < " " for c in value) else value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return getattr(value, "literal", None) or go_float_text(value)
    return _NOT_A_NUMBER  # null, an object, an array (or no JSON at all)


def go_float_text(value: float) -> str:
    """A float64 as Go's ``encoding/json`` writes it: shortest digits, positional between
    1e-6 and 1e21, else ``1e-7`` / ``1.5e+21``."""
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    shortest = Decimal(repr(value))
    if 1e-6 <= abs(value) < 1e21:
        return _positional(shortest)
    sign, digits, _ = shortest.as_tuple()
    figures = "".join(map(str, digits)).rstrip("0") or "0"
    mantissa = figures[0] + (f".{figures[1:]}" if len(figures) > 1 else "")
    exp = shortest.adjusted()
    exponent = f"e+{exp:02d}" if exp > 0 else f"e-{-exp}"  # Go writes e-07 and trims it to e-7
    return f"{'-' if sign else ''}{mantissa}{exponent}"


def _positional(number: Decimal) -> str:
    sign, digits, exp = number.as_tuple()
    figures = "".join(map(str, digits))
    exp = int(exp)
    if exp >= 0:
        out = figures + "0" * exp
    else:
        figures = figures.rjust(-exp + 1, "0")
        whole, fraction = figures[:exp], figures[exp:].rstrip("0")
        out = whole + (f".{fraction}" if fraction else "")
    return ("-" if sign else "") + out


@dataclass(frozen=True)
class _Scanned:
    positive: bool
    number: str  # sign, digits and point as written (the arbitrary-precision path parses it)
    whole: str  # integer digits without leading zeros ("0" when there are none)
    fraction: str
    suffix: str


def _scan(text: str) -> _Scanned:
    """apimachinery's ``parseQuantityString``: number, fraction and suffix, or FORMAT_WRONG."""
    end, pos, positive = len(text), 0, True
    if text[0] in "+-":
        positive, pos = text[0] == "+", 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return _Scanned(positive, "0", "0", "", "")
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    whole, fraction = text[start:pos] or "0", ""
    if pos < end and text[pos] == ".":
        start = pos = pos + 1
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        fraction = text[start:pos]
    number = text[:pos]
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return _Scanned(positive, number, whole, fraction, text[len(number) :])


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix, or SUFFIX_WRONG."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT.match(suffix[1:]):
        exponent = int(suffix[1:])
        if -(2**63) <= exponent < 2**63:
            return 10, (exponent + 2**31) % 2**32 - 2**31, DECIMAL_EXPONENT  # stored as int32
    raise QuantityError(SUFFIX_WRONG)


@functools.lru_cache(maxsize=4096)
def _canonical(text: str) -> str:
    return str(_parse_text(text))


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> Quantity:
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Quantity(0, 0, DECIMAL_SI, "0")
    scanned = _scan(text)
    base, exponent, fmt = _interpret(scanned.suffix)
    fast = _fast_path(text, scanned, exponent, fmt)
    if fast is not None:
        return fast
    if not any(c in _DIGITS for c in scanned.number):
        raise QuantityError(NUMERIC_WRONG)
    coefficient = int(scanned.whole + scanned.fraction)
    scale = -len(scanned.fraction)
    if base == 10:
        scale += exponent
    else:
        coefficient <<= exponent
    return _bounded(scanned.positive, coefficient, scale, fmt)


def _fast_path(text: str, scanned: _Scanned, exponent: int, fmt: str) -> Quantity | None:
    """The int64 path of ``ParseQuantity``: exact values whose digits fit an int64, with the
    text kept as written when it already looks canonical; None where apimachinery falls back
    to arbitrary precision."""
    whole, fraction = scanned.whole, scanned.fraction
    multiplier = 1
    if fmt == BINARY_SI:
        if exponent < 0 or fraction:
            return None
        scale, multiplier = 0, 1 << exponent
        digits_left = 15 - len(whole) - exponent * 3 // 10 - 1
    else:
        scale = exponent - len(fraction)
        digits_left = _MAX_INT64_DIGITS - len(whole) - len(fraction)
    if digits_left < 0 or scale < _NANO:
        return None
    shifted = whole + fraction
    unscaled = int(shifted)
    if unscaled * multiplier > _INT64_MAX:
        return None
    if fmt == BINARY_SI:
        kept = unscaled & 7 != 0
    else:
        kept = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    sign = 1 if scanned.positive else -1
    return Quantity(sign * unscaled * multiplier, scale, fmt, text if kept else None)


def _bounded(positive: bool, magnitude: int, scale: int, fmt: str) -> Quantity:
    """The arbitrary-precision path: round up to nano units, cap binary values at 2^63-1."""
    if magnitude and scale < _NANO:
        places = _NANO - scale
        whole, rest = divmod(magnitude, 10**places) if places <= len(str(magnitude)) else (0, 1)
        magnitude, scale = whole + (1 if rest else 0), _NANO
    if fmt == BINARY_SI and _exceeds(magnitude, scale, _INT64_MAX):
        magnitude, scale = _INT64_MAX, 0
    if fmt == BINARY_SI and magnitude and not _exceeds(magnitude, scale, 1, or_equal=True):
        fmt = DECIMAL_SI
    return Quantity(magnitude if positive else -magnitude, scale, fmt)


def _exceeds(magnitude: int, scale: int, bound: int, or_equal: bool = False) -> bool:
    """``magnitude * 10**scale > bound`` (or ``>=``), exactly."""
    left, right = (magnitude * 10**scale, bound) if scale >= 0 else (magnitude, bound * 10**-scale)
    return left >= right if or_equal else left > right


def _canonical_text(q: Quantity) -> str:
    """``Quantity.CanonicalizeBytes``: integer mantissa, largest lossless suffix."""
    if q.coefficient == 0:
        return "0"
    sign = "-" if q.coefficient < 0 else ""
    magnitude, scale = abs(q.coefficient), q.exponent
    if q.format == BINARY_SI and _exceeds(magnitude, scale, 1024, or_equal=True):
        whole, rest = divmod(magnitude * 10 ** max(scale, 0), 10 ** max(-scale, 0))
        if not rest:
            return sign + _binary_text(whole)
    while magnitude % 10 == 0:
        magnitude //= 10
        scale += 1
    shift = scale % 3
    magnitude, scale = magnitude * 10**shift, scale - shift
    if q.format == DECIMAL_EXPONENT:
        suffix = f"e{scale}" if scale else ""
    else:
        suffix = _DECIMAL_BY_EXPONENT.get(scale, "")  # none above E: apimachinery drops it
    return f"{sign}{magnitude}{suffix}"


def _binary_text(value: int) -> str:
    power = 0
    while value >= 1024 and value % 1024 == 0:
        value //= 1024
        power += 1
    return f"{value}{_BINARY_BY_POWER.get(power, '')}"
