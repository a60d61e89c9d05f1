"""Resource quantities as apimachinery's ``resource.Quantity`` parses, adds and prints them.

A quantity is an exact decimal with the format it was written in: ``BinarySI`` (``Ki``..``Ei``),
``DecimalSI`` (``n``..``E``, or none) or ``DecimalExponent`` (``1e3``). Parsing rounds up to
nano units, as the Go type does; a sum keeps the format of its first term; the text is Go's
canonical form (``1536Mi`` for 1.5Gi, ``500m`` for 0.5, ``1k`` for 1000), so what we write into
an object is what a Go client would have written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}  # powers of 1024
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_SUFFIX = {power: suffix for suffix, power in _BINARY.items()}
# The grammar of apimachinery's ParseQuantity (the pattern CRDs declare for quantities).
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)
_NANO = Decimal("1e-9")


class QuantityError(ValueError):
    """Text that is no quantity."""


@dataclass(frozen=True)
class Quantity:
    value: Decimal
    format: str = DECIMAL_SI

    @classmethod
    def parse(cls, text: str | int | float) -> Quantity:
        """Parse ``text`` (a JSON number is read as its decimal text)."""
        if isinstance(text, bool) or not isinstance(text, str | int | float):
            raise QuantityError(f"quantities must be strings or numbers, got {text!r}")
        match = _QUANTITY.match(str(text))
        if match is None:
            raise QuantityError(f"quantities must match the regular expression: {text!r}")
        number, suffix = Decimal(match["number"]), match["suffix"] or ""
        if suffix in _BINARY:
            value, fmt = number * (1024 ** _BINARY[suffix]), BINARY_SI
        elif suffix in _DECIMAL:
            value, fmt = number.scaleb(_DECIMAL[suffix]), DECIMAL_SI
        else:
            value, fmt = number.scaleb(int(suffix[1:])), DECIMAL_EXPONENT
        return cls(value.quantize(_NANO, rounding=ROUND_CEILING), fmt)

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.format)

    def __str__(self) -> str:
        if self.value == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI and (abs(self.value) < 1024 or self.value != self.value.to_integral()):
            fmt = DECIMAL_SI  # below 1Ki, or not whole: shown exactly in decimal
        if fmt == BINARY_SI:
            amount, power = int(self.value), 0
            while amount % 1024 == 0 and power < max(_BINARY_SUFFIX):
                amount, power = amount // 1024, power + 1
            return f"{amount}{_BINARY_SUFFIX.get(power, '')}"
        sign, digits, exponent = self.value.normalize().as_tuple()
        assert isinstance(exponent, int)
        amount = int("".join(map(str, digits))) * (-1 if sign else 1)
        if exponent % 3:  # down to a multiple of 3
            amount, exponent = amount * 10 ** (exponent % 3), exponent - exponent % 3
        if fmt == DECIMAL_SI and exponent in _DECIMAL_SUFFIX:
            return f"{amount}{_DECIMAL_SUFFIX[exponent]}"
        return f"{amount}e{exponent}" if exponent else str(amount)


def is_quantity(text: object) -> bool:
    try:
        Quantity.parse(text)  # type: ignore[arg-type]  # checked inside: anything may come
    except QuantityError:
        return False
    return True
