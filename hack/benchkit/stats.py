"""Small statistics helpers shared by the scenarios and the report."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


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


def median_run(runs: list[dict[str, Any]], key: str = "ms_per_job") -> dict[str, Any]:
    """Of repeated runs, the one with the median ``key``, with every run's ``key`` alongside
    (``runs_<key>``); an incomplete run (no ``key``) is returned instead, so that a failure
    is never outvoted. A single run is returned as it is."""
    if len(runs) == 1:
        return runs[0]
    failed = [run for run in runs if not run.get(key)]
    chosen = failed[0] if failed else sorted(runs, key=lambda r: r[key])[len(runs) // 2]
    return {**chosen, f"runs_{key}": [run.get(key) for run in runs]}
