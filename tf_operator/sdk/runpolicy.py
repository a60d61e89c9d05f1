"""A job's run policy as its users see it: is it suspended, who manages it, which queue holds
it; and the patches that suspend and resume it.

Pure functions on the job's JSON. They hold for every kubeflow.org job kind: training-operator
v1.9's ``spec.runPolicy`` (``suspend``, ``managedBy``) is one type shared by all of them, and
Kueue queues them all by the same label. ``suspend`` asks; the operator answers with the
``Suspended`` condition (True once the pods are gone, False again once resumed), so
:func:`suspend_requested` and :func:`is_suspended` differ while it acts. A job whose
``managedBy`` names another controller (such as MultiKueue) gets nothing from this operator:
no pods, no status (D63).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tf_operator.apis.common.v1.run_policy import KUBEFLOW_JOBS_CONTROLLER, other_manager
from tf_operator.apis.common.v1.types import JOB_SUSPENDED
from tf_operator.sdk.conditions import has_condition

# The label that sends a job to a Kueue LocalQueue (Kueue then admits and evicts it by
# suspending and resuming it).
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def run_policy(job: Mapping[str, Any]) -> dict[str, Any]:
    """``spec.runPolicy`` (empty when unset)."""
    policy = (job.get("spec") or {}).get("runPolicy")
    return dict(policy) if isinstance(policy, Mapping) else {}


def suspend_requested(job: Mapping[str, Any]) -> bool:
    """``spec.runPolicy.suspend`` is true: the job is to have no pods."""
    return run_policy(job).get("suspend") is True


def is_suspended(job: Mapping[str, Any]) -> bool:
    """The operator has suspended the job (its ``Suspended`` condition is True)."""
    return has_condition(job, JOB_SUSPENDED)


def managed_by(job: Mapping[str, Any]) -> str:
    """The controller that runs the job (``kubeflow.org/training-operator``: this operator)."""
    return other_manager(job) or KUBEFLOW_JOBS_CONTROLLER


def is_managed_elsewhere(job: Mapping[str, Any]) -> bool:
    """``managedBy`` names another controller: this operator leaves the job alone."""
    return other_manager(job) is not None


def queue_name(job: Mapping[str, Any]) -> str | None:
    """The Kueue LocalQueue the job was sent to, if any."""
    labels = (job.get("metadata") or {}).get("labels") or {}
    name = labels.get(QUEUE_LABEL)
    return str(name) if name else None


def suspend_patch(suspend: bool) -> dict[str, Any]:
    """The merge patch that suspends (``True``) or resumes (``False``) a job."""
    return {"spec": {"runPolicy": {"suspend": suspend}}}
