"""``resource.Quantity`` as the API server decodes it: ``parse`` or ``QuantityError``.

The grammar and the three error texts are apimachinery's: a first regular-expression check
(``quantities must match the regular expression ...``), then the number (at most one '.') and
the suffix (binary ``Ki``..``Ei``, decimal ``n``..``E`` or an exponent ``e3``/``E-3``). JSON
numbers are quantities too. Values are exact (``Decimal``), so comparisons such as
"request <= limit" never round.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

SPLIT_RE_TEXT = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_SPLIT_RE = re.compile(SPLIT_RE_TEXT)
_NUMBER_RE = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$")
_EXPONENT_RE = re.compile(r"^[eE][-+]?[0-9]+$")

FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE_TEXT}'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
NUMERIC_WRONG = "unable to parse numeric part of quantity"

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


class QuantityError(ValueError):
    """The text is not a quantity; ``str(err)`` is apimachinery's message."""


def parse(value: Any) -> Decimal:
    """The exact value of a quantity given as a JSON string or number."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise QuantityError(FORMAT_WRONG)
    text = value.strip() if isinstance(value, str) else repr(value)
    match = _SPLIT_RE.match(text)
    if not match:
        raise QuantityError(FORMAT_WRONG)
    number, suffix = match.group(1), match.group(2)
    if not _NUMBER_RE.match(number):
        raise QuantityError(NUMERIC_WRONG)
    try:
        amount = Decimal(number)
    except InvalidOperation as e:  # pragma: no cover - the regex admits only decimals
        raise QuantityError(NUMERIC_WRONG) from e
    if suffix in _BINARY:
        return amount * (Decimal(1024) ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return amount.scaleb(_DECIMAL[suffix])
    if _EXPONENT_RE.match(suffix):
        return amount.scaleb(int(suffix[1:]))
    raise QuantityError(SUFFIX_WRONG)


def text(value: Any) -> str:
    """How a quantity shows in an error: the string as given, a number without trailing zeros."""
    return value if isinstance(value, str) else format(Decimal(repr(value)).normalize(), "f")
