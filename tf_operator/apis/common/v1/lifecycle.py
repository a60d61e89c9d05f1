"""A job's lifecycle policy (``spec.lifecyclePolicy``), shared by every kind (divergence D100).

The policy is new, optional and immutable: a job without one behaves exactly as before. It
lives in the spec, where the CRD's schema and CEL rules check it at admission, and the
operator copies it once into ``status.lifecyclePolicy``, the policy *in force*. The copy is
what the operator obeys from then on: a client built on training-operator v1.9's Go types
knows no ``lifecyclePolicy``, so a read-modify-write (a full update) by it sends the spec
without the field; the CRD admits that (it cannot tell such a client from a user removing the
field, and refusing would break Kueue's updates), the status subresource keeps the copy, and
the policy stays in force. Adding or changing the field after creation is refused by the CRD,
as batch/v1 Job's ``successPolicy`` and ``podFailurePolicy`` are immutable.

``success`` (:class:`SuccessRule`) says when the job has succeeded: its ``rule`` (``Chief``,
``Worker0``, ``AllWorkers``, ``MinWorkers`` for a TFJob; ``Master``, ``AllWorkers`` for a
PyTorchJob), ``minWorkers`` or ``minWorkersPercent`` for ``MinWorkers``, and
``waitForEvaluators``. The pure decision is
:mod:`tf_operator.common.jobcontroller.success_policy`. ``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tf_operator.apis.common.v1.fields import (
    DecodeError,
    expect_dict,
    opt_bool,
    opt_int,
    opt_str,
    put_present,
    rest,
)
from tf_operator.k8s.objects import json_copy

# Where the policy is written (spec) and where the one in force is kept (status).
LIFECYCLE_POLICY_FIELD = "lifecyclePolicy"

# success rules
SUCCESS_CHIEF = "Chief"  # the Chief (or its legacy name Master) succeeded
SUCCESS_MASTER = "Master"  # a PyTorchJob's Master succeeded
SUCCESS_WORKER0 = "Worker0"  # worker 0 completed
SUCCESS_ALL_WORKERS = "AllWorkers"  # every worker succeeded
SUCCESS_MIN_WORKERS = "MinWorkers"  # at least minWorkers (or minWorkersPercent) succeeded
TF_SUCCESS_RULES = (SUCCESS_CHIEF, SUCCESS_WORKER0, SUCCESS_ALL_WORKERS, SUCCESS_MIN_WORKERS)
PYTORCH_SUCCESS_RULES = (SUCCESS_MASTER, SUCCESS_ALL_WORKERS)
LEADER_RULES = (SUCCESS_CHIEF, SUCCESS_MASTER)
WORKER_RULES = (SUCCESS_WORKER0, SUCCESS_ALL_WORKERS, SUCCESS_MIN_WORKERS)


class LifecyclePolicyError(DecodeError):
    """The policy contradicts itself or the job (the CRD's CEL rules refuse the same)."""


@dataclass(frozen=True)
class SuccessRule:
    """``lifecyclePolicy.success``: when the job has succeeded (see the module docstring)."""

    rule: str
    min_workers: int | None = None
    min_workers_percent: int | None = None
    wait_for_evaluators: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("rule", "minWorkers", "minWorkersPercent", "waitForEvaluators")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> SuccessRule:
        data = expect_dict(data, path, allow_none=False) or {}
        rule = opt_str(data, "rule", path)
        if rule is None:
            raise DecodeError(f"{path}.rule: Required value")
        return cls(
            rule=rule,
            min_workers=opt_int(data, "minWorkers", path),
            min_workers_percent=opt_int(data, "minWorkersPercent", path),
            wait_for_evaluators=bool(opt_bool(data, "waitForEvaluators", path)),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule}
        put_present(
            out,
            (
                ("minWorkers", self.min_workers),
                ("minWorkersPercent", self.min_workers_percent),
                ("waitForEvaluators", self.wait_for_evaluators or None),
            ),
        )
        out.update(json_copy(self.extra))
        return out

    def workers_needed(self, workers: int) -> int:
        """How many of ``workers`` must succeed under this rule (Worker0: worker 0 alone)."""
        if self.rule == SUCCESS_MIN_WORKERS:
            if self.min_workers is not None:
                return self.min_workers
            return max(1, math.ceil(workers * (self.min_workers_percent or 100) / 100))
        if self.rule == SUCCESS_ALL_WORKERS:
            return workers
        return 1


@dataclass(frozen=True)
class LifecyclePolicy:
    """``spec.lifecyclePolicy`` (and the copy in force, ``status.lifecyclePolicy``)."""

    success: SuccessRule | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("success",)

    @classmethod
    def from_dict(cls, data: Any, path: str) -> LifecyclePolicy:
        data = expect_dict(data, path, allow_none=False) or {}
        success = data.get("success")
        return cls(
            success=None if success is None else SuccessRule.from_dict(success, f"{path}.success"),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.success is not None:
            out["success"] = self.success.to_dict()
        out.update(json_copy(self.extra))
        return out


def policy_in_force(
    spec_extra: Mapping[str, Any], status_extra: Mapping[str, Any]
) -> LifecyclePolicy | None:
    """The policy a job runs under: the copy in its status once the operator made it (a
    foreign full update may have dropped the spec's), else the spec's. Raises
    :class:`DecodeError` when either is malformed."""
    recorded = status_extra.get(LIFECYCLE_POLICY_FIELD)
    if recorded is not None:
        return LifecyclePolicy.from_dict(recorded, f"status.{LIFECYCLE_POLICY_FIELD}")
    written = spec_extra.get(LIFECYCLE_POLICY_FIELD)
    if written is not None:
        return LifecyclePolicy.from_dict(written, f"spec.{LIFECYCLE_POLICY_FIELD}")
    return None


def check_success_rule(
    invalid: str,
    success: SuccessRule,
    allowed: tuple[str, ...],
    replicas: Mapping[str, int],
    leader_types: tuple[str, ...],
    worker_type: str,
    successpolicy_all_workers: bool = False,
) -> None:
    """Refuse what the CRD's rules refuse: a rule the kind does not know, a rule naming a
    replica type the job lacks, N of M with N > M, a count for a rule that takes none, and a
    contradiction with v1.9's ``successPolicy: AllWorkers``. ``replicas``: canonical replica
    type → replicas (defaults applied)."""
    path = f"spec.{LIFECYCLE_POLICY_FIELD}.success"
    rule = success.rule
    if rule not in allowed:
        raise LifecyclePolicyError(
            f"{invalid}: {path}.rule: unsupported value {rule!r}: expected one of "
            f"{', '.join(allowed)}"
        )
    counted = (success.min_workers, success.min_workers_percent)
    if rule == SUCCESS_MIN_WORKERS:
        if (counted[0] is None) == (counted[1] is None):
            raise LifecyclePolicyError(
                f"{invalid}: {path}: rule MinWorkers needs exactly one of minWorkers and "
                "minWorkersPercent"
            )
    elif counted != (None, None):
        raise LifecyclePolicyError(
            f"{invalid}: {path}: minWorkers and minWorkersPercent go only with rule MinWorkers"
        )
    if success.min_workers is not None and success.min_workers < 1:
        raise LifecyclePolicyError(f"{invalid}: {path}.minWorkers must be at least 1")
    percent = success.min_workers_percent
    if percent is not None and not 1 <= percent <= 100:
        raise LifecyclePolicyError(f"{invalid}: {path}.minWorkersPercent must be within [1, 100]")
    if rule in LEADER_RULES and not any(t in replicas for t in leader_types):
        raise LifecyclePolicyError(
            f"{invalid}: {path}.rule {rule} needs a {' or '.join(leader_types)} replica"
        )
    if rule in WORKER_RULES and worker_type not in replicas:
        raise LifecyclePolicyError(f"{invalid}: {path}.rule {rule} needs {worker_type} replicas")
    workers = replicas.get(worker_type, 0)
    if success.min_workers is not None and success.min_workers > workers:
        raise LifecyclePolicyError(
            f"{invalid}: {path}.minWorkers ({success.min_workers}) exceeds the {worker_type} "
            f"replicas ({workers}): N of M needs N <= M"
        )
    if successpolicy_all_workers and rule != SUCCESS_ALL_WORKERS:
        raise LifecyclePolicyError(
            f"{invalid}: spec.successPolicy (AllWorkers) and {path}.rule ({rule}) contradict: "
            "give one of them"
        )
