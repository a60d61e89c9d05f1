"""Names the job controller gives its objects and expectation keys."""

from __future__ import annotations


def gen_general_name(job_name: str, rtype: str, index: str | int) -> str:
    """``<job>-<rt>-<index>`` with every ``/`` replaced by ``-`` (pods and services share it)."""
    return f"{job_name}-{rtype}-{index}".replace("/", "-")


def gen_expectation_key(job_key: str, replica_type: str, suffix: str) -> str:
    """``<job key>/<rt>/<suffix>``, the suffix being ``pods`` or ``services``."""
    return f"{job_key}/{replica_type.lower()}/{suffix}"
