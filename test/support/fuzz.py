"""The API server fuzz tests' Hypothesis settings: derandomized, so every run (and every
pytest-xdist worker) tries the same examples, and a failure is one anyone can reproduce."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
