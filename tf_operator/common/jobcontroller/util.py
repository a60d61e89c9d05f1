"""Small helpers of the job controller: generated names, keys, owner re-checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tf_operator.k8s.objects import meta


def gen_general_name(job_name: str, rtype: str, index: str | int) -> str:
    """``<job>-<rt>-<index>`` with every ``/`` replaced by ``-`` (pods and services share it)."""
    return f"{job_name}-{rtype}-{index}".replace("/", "-")


def gen_expectation_key(job_key: str, replica_type: str, suffix: str) -> str:
    """``<job key>/<rt>/<suffix>``, the suffix being ``pods`` or ``services``."""
    return f"{job_key}/{replica_type.lower()}/{suffix}"


def job_key(obj: Any) -> str:
    """The workqueue key ``<namespace>/<name>`` of a job (raw or decoded)."""
    m = meta(obj)
    namespace, name = m.get("namespace") or "", str(m.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


def recheck_deletion_timestamp(get_object: Callable[[], Any]) -> Callable[[], None]:
    """A ``can_adopt`` check: fetch the owner again and refuse if it is being deleted."""

    def check() -> None:
        try:
            obj = get_object()
        except Exception as err:
            raise RuntimeError(f"can't recheck DeletionTimestamp: {err}") from err
        m = meta(obj)
        if m.get("deletionTimestamp"):
            raise RuntimeError(
                f"{m.get('namespace')}/{m.get('name')} has just been deleted at "
                f"{m['deletionTimestamp']}"
            )

    return check


def group_of(api_version: str) -> str:
    """The API group of an ``apiVersion`` (``""`` for the core group ``v1``)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""
