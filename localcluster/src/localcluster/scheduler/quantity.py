"""Kubernetes resource quantities ("500m", "4Gi", "1e3") as exact numbers.

The scheduler only compares and sums quantities, so a quantity is parsed into a
``Fraction`` of its base unit (cores for cpu, bytes for memory, units for
everything else). Fractions keep "100m" + "900m" == 1 exact, which floats do not.
"""

from __future__ import annotations

import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# Beyond any node: apimachinery reads a larger amount's int64 value as its maximum.
MAX_QUANTITY = Fraction(2**63 - 1)
_EXPONENT_BOUND = 40
_PATTERN = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE]?)$")


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a quantity; raises ValueError on malformed text."""
    if isinstance(value, bool):
        raise ValueError(f"invalid quantity {value!r}")
    if isinstance(value, int | float):
        return Fraction(value)
    text = str(value).strip()
    match = _PATTERN.match(text)
    if not match:
        raise ValueError(f"invalid quantity {value!r}")
    number, suffix = Fraction(match.group(1)), match.group(2)
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        exponent = int(suffix[1:])
        if number and exponent > _EXPONENT_BOUND:  # 10^exponent would take ages to compute
            return number / abs(number) * MAX_QUANTITY
        if exponent < -_EXPONENT_BOUND:
            return Fraction(0)  # finer than the API server keeps (it rounds up to 1n)
        return min(number * Fraction(10) ** exponent, MAX_QUANTITY)
    return number * _DECIMAL[suffix]
