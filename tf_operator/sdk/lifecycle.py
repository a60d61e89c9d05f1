"""A job's lifecycle policy (docs/policies.md): builders for each part, and what the status says
of it (the policy in force, the restart budget used, restarts by cause, why it is blocked).

The builders return plain JSON for ``spec.lifecyclePolicy`` and check it with the operator's
own rules; :func:`with_lifecycle_policy` puts one on a job (any kind) and validates the whole
job, so a contradiction (N of M with N > M) surfaces here, not as a refusal later. The policy
is immutable once the job exists. The readers are pure functions on the job's JSON.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tf_operator.apis.common.v1.lifecycle import (
    ACTION_FAIL_JOB,
    BLOCKED_PREFIX,
    EXIT_CODES_IN,
    EXIT_CODES_NOT_IN,
    LIFECYCLE_POLICY_FIELD,
    RESTARTS_BY_CAUSE,
    RESTARTS_BY_REPLICA_TYPE,
    FailurePolicy,
    FailureRule,
    StartupPolicy,
    SuccessRule,
)
from tf_operator.apis.jax.v1.types import JAXJob
from tf_operator.apis.jax.validation.validation import validate_v1_jaxjob
from tf_operator.apis.paddle.v1.types import PaddleJob
from tf_operator.apis.paddle.validation.validation import validate_v1_paddlejob
from tf_operator.apis.pytorch.v1.types import PyTorchJob
from tf_operator.apis.pytorch.validation.validation import validate_v1_pytorchjob
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.apis.tensorflow.validation.validation import validate_v1_tfjob
from tf_operator.apis.xgboost.v1.types import XGBoostJob
from tf_operator.apis.xgboost.validation.validation import validate_v1_xgboostjob
from tf_operator.sdk.conditions import get_conditions


def success_policy(
    rule: str,
    *,
    min_workers: int | None = None,
    min_workers_percent: int | None = None,
    wait_for_evaluators: bool = False,
) -> dict[str, Any]:
    """``lifecyclePolicy.success``: ``Chief``, ``Worker0``, ``AllWorkers``, ``MinWorkers``
    (TFJob), ``Master``, ``AllWorkers``, ``MinWorkers`` (PyTorchJob, XGBoostJob, PaddleJob),
    ``Worker0``, ``AllWorkers``, ``MinWorkers`` (JAXJob)."""
    return SuccessRule(rule, min_workers, min_workers_percent, wait_for_evaluators).to_dict()


def failure_rule(
    action: str,
    *,
    exit_codes_in: Sequence[int] | None = None,
    exit_codes_not_in: Sequence[int] | None = None,
    replica_types: Sequence[str] | None = None,
    on_disruption: bool | None = None,
) -> dict[str, Any]:
    """One rule: ``RestartReplica``, ``RestartJob``, ``FailJob`` or ``Ignore`` for the ends it
    matches (every matcher given must hold)."""
    if exit_codes_in is not None and exit_codes_not_in is not None:
        raise ValueError("give exit_codes_in or exit_codes_not_in, not both")
    operator: str | None = None
    codes: tuple[int, ...] = ()
    if exit_codes_in is not None:
        operator, codes = EXIT_CODES_IN, tuple(exit_codes_in)
    elif exit_codes_not_in is not None:
        operator, codes = EXIT_CODES_NOT_IN, tuple(exit_codes_not_in)
    return FailureRule(action, operator, codes, tuple(replica_types or ()), on_disruption).to_dict()


def failure_policy(
    *rules: Mapping[str, Any],
    count_disruptions: bool = False,
    replica_type_limits: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """``lifecyclePolicy.failure``: the rules in order (first match wins); disruptions no rule
    matches are recreated without spending the budget unless ``count_disruptions``;
    ``replica_type_limits`` caps the counted restarts of a replica type's replicas."""
    data: dict[str, Any] = {"rules": [dict(r) for r in rules]}
    data["countDisruptions"] = count_disruptions
    if replica_type_limits:
        data["replicaTypeLimits"] = dict(replica_type_limits)
    policy = FailurePolicy.from_dict(data, "failure")
    return policy.to_dict()


def startup_policy(
    *,
    deadline_seconds: int | None = None,
    action: str = ACTION_FAIL_JOB,
    ordered: bool | None = None,
    publish_not_ready_addresses: bool | None = None,
) -> dict[str, Any]:
    """``lifecyclePolicy.startup``: the blocking reason told on the job; a deadline that fails
    (``FailJob``) or restarts (``RestartJob``) the job; ordered start; peer names early."""
    return StartupPolicy(deadline_seconds, action, ordered, publish_not_ready_addresses).to_dict()


def _validate_tfjob(job: dict[str, Any]) -> None:
    validate_v1_tfjob(TFJob.from_dict(job))


# kind -> decode and validate a job of it with the operator's own rules
_VALIDATE: dict[str, Callable[[dict[str, Any]], None]] = {
    "TFJob": _validate_tfjob,
    "PyTorchJob": lambda job: validate_v1_pytorchjob(PyTorchJob.from_dict(job)),
    "XGBoostJob": lambda job: validate_v1_xgboostjob(XGBoostJob.from_dict(job)),
    "JAXJob": lambda job: validate_v1_jaxjob(JAXJob.from_dict(job)),
    "PaddleJob": lambda job: validate_v1_paddlejob(PaddleJob.from_dict(job)),
}


def with_lifecycle_policy(
    job: Mapping[str, Any],
    *,
    success: Mapping[str, Any] | None = None,
    failure: Mapping[str, Any] | None = None,
    startup: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A copy of ``job`` (a dict of any kind the operator runs, as ``tfjob()`` builds; a job
    without ``kind`` is a TFJob) with this lifecycle policy, checked with the operator's
    validation of its kind; raises ``ValueError`` when the policy contradicts itself or the
    job."""
    policy: dict[str, Any] = {}
    for key, part in (("success", success), ("failure", failure), ("startup", startup)):
        if part is not None:
            policy[key] = dict(part)
    out = copy.deepcopy(dict(job))
    out.setdefault("spec", {})[LIFECYCLE_POLICY_FIELD] = policy
    _VALIDATE.get(str(out.get("kind")), _validate_tfjob)(out)
    return out


def policy_in_force(job: Mapping[str, Any]) -> dict[str, Any] | None:
    """The lifecycle policy the operator obeys: its copy in the status once made (a foreign
    client's full update may have dropped the spec's), else the spec's."""
    status = job.get("status") or {}
    spec = job.get("spec") or {}
    policy = status.get(LIFECYCLE_POLICY_FIELD) or spec.get(LIFECYCLE_POLICY_FIELD)
    return dict(policy) if isinstance(policy, Mapping) else None


def restarts_by_replica_type(job: Mapping[str, Any]) -> dict[str, int]:
    """Counted restarts of each replica type's replicas (what ``replicaTypeLimits`` caps)."""
    counts = (job.get("status") or {}).get(RESTARTS_BY_REPLICA_TYPE) or {}
    return {str(k): int(v) for k, v in counts.items()}


def restarts_by_cause(job: Mapping[str, Any]) -> dict[str, int]:
    """Replicas recreated, by cause (``Disruption``, ``ExitCode``, ``FailureRule``,
    ``Ignored``, ``JobRestart``, ``StartupDeadline``); empty for a job without a policy."""
    causes = (job.get("status") or {}).get(RESTARTS_BY_CAUSE) or {}
    return {str(k): int(v) for k, v in causes.items()}


def restart_budget(job: Mapping[str, Any]) -> tuple[int, int | None]:
    """(recreations counted against ``backoffLimit``, the limit or None): the durable part of
    the budget (container restarts of live pods add to it)."""
    spec = job.get("spec") or {}
    limit = (spec.get("runPolicy") or {}).get("backoffLimit", spec.get("backoffLimit"))
    counted = ((job.get("status") or {}).get("exitCodeRestarts") or {}).get("count", 0)
    return int(counted), None if limit is None else int(limit)


def blocking_reason(job: Mapping[str, Any]) -> str | None:
    """Why the job does not start, as the operator told it in its Created condition: what no
    scheduler can satisfy (any job: a gang larger than the job, a missing queue, creates the
    API server refuses; D156, D157), else, with a start-up policy, its first stuck replica."""
    for condition in get_conditions(job):
        message = str(condition.get("message") or "")
        if condition.get("type") == "Created" and BLOCKED_PREFIX in message:
            return message.split(BLOCKED_PREFIX, 1)[1]
    return None
