"""Small statistics helpers shared by the scenarios and the report."""

from __future__ import annotations

import math
from collections.abc import Iterable


def percentile(values: Iterable[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; None when empty."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def rnd(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def ratio(a: float | None, b: float | None, digits: int = 2) -> float | None:
    """``a / b`` rounded; None when either is missing or ``b`` is zero."""
    if a is None or not b:
        return None
    return round(a / b, digits)
