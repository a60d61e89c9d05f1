"""Small helpers of the job controller: names, expectation keys, object metadata access.

Jobs reach this layer either as plain dicts (objects from the API or an informer) or as typed
objects with a ``metadata`` dict (a decoded TFJob); ``meta`` hides the difference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tf_operator.control.util import get_controller_of, labels_of, meta

__all__ = [
    "gen_expectation_pods_key",
    "gen_expectation_services_key",
    "gen_general_name",
    "get_controller_of",
    "group_of",
    "job_key",
    "labels_of",
    "meta",
    "recheck_deletion_timestamp",
]


def gen_general_name(job_name: str, rtype: str, index: str | int) -> str:
    """``<job>-<rt>-<index>`` with every ``/`` replaced by ``-`` (pods and services share it)."""
    return f"{job_name}-{rtype}-{index}".replace("/", "-")


def gen_expectation_pods_key(job_key: str, replica_type: str) -> str:
    return f"{job_key}/{replica_type.lower()}/pods"


def gen_expectation_services_key(job_key: str, replica_type: str) -> str:
    return f"{job_key}/{replica_type.lower()}/services"


def job_key(obj: Any) -> str:
    """The workqueue key ``<namespace>/<name>`` (just ``<name>`` when cluster-scoped)."""
    m = meta(obj)
    namespace = m.get("namespace") or ""
    return f"{namespace}/{m.get('name', '')}" if namespace else m.get("name", "")


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
