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
``Worker0``, ``AllWorkers``, ``MinWorkers`` for a TFJob; ``Master``, ``AllWorkers``,
``MinWorkers`` for a PyTorchJob, an XGBoostJob and a PaddleJob;
``Worker0``, ``AllWorkers``, ``MinWorkers`` for a JAXJob: :class:`KindRules`), ``minWorkers``
or ``minWorkersPercent`` for ``MinWorkers``, and ``waitForEvaluators``. The pure decision is
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
# status.restartsByCause: replicas recreated for a job with a failure policy, by cause (D103)
RESTARTS_BY_CAUSE = "restartsByCause"
# status.restartsByReplicaType: the counted restarts of each replica type's replicas (D103)
RESTARTS_BY_REPLICA_TYPE = "restartsByReplicaType"
# What follows this in the Created condition's message is why a replica does not start (D104)
BLOCKED_PREFIX = " Blocked: "

# success rules
SUCCESS_CHIEF = "Chief"  # the Chief (or its legacy name Master) succeeded
SUCCESS_MASTER = "Master"  # a PyTorchJob's Master succeeded
SUCCESS_WORKER0 = "Worker0"  # worker 0 completed
SUCCESS_ALL_WORKERS = "AllWorkers"  # every worker succeeded
SUCCESS_MIN_WORKERS = "MinWorkers"  # at least minWorkers (or minWorkersPercent) succeeded
TF_SUCCESS_RULES = (SUCCESS_CHIEF, SUCCESS_WORKER0, SUCCESS_ALL_WORKERS, SUCCESS_MIN_WORKERS)
# PyTorchJob, XGBoostJob and PaddleJob: a Master and Workers, and N of M workers (D110)
MASTER_WORKER_SUCCESS_RULES = (SUCCESS_MASTER, SUCCESS_ALL_WORKERS, SUCCESS_MIN_WORKERS)
PYTORCH_SUCCESS_RULES = MASTER_WORKER_SUCCESS_RULES
# JAXJob: Workers only, worker 0 the coordinator (D110)
WORKERS_ONLY_SUCCESS_RULES = (SUCCESS_WORKER0, SUCCESS_ALL_WORKERS, SUCCESS_MIN_WORKERS)
LEADER_RULES = (SUCCESS_CHIEF, SUCCESS_MASTER)
WORKER_RULES = (SUCCESS_WORKER0, SUCCESS_ALL_WORKERS, SUCCESS_MIN_WORKERS)


# failure rules' actions
ACTION_RESTART_REPLICA = "RestartReplica"  # recreate the replica, counted in the budget
ACTION_RESTART_JOB = "RestartJob"  # recreate every replica together, counted once
ACTION_FAIL_JOB = "FailJob"  # fail the job at once
ACTION_IGNORE = "Ignore"  # recreate the replica without counting
ACTIONS = (ACTION_RESTART_REPLICA, ACTION_RESTART_JOB, ACTION_FAIL_JOB, ACTION_IGNORE)
# no rule matched and it is no disruption: the replica's restart policy decides, as before
ACTION_DEFAULT = ""
EXIT_CODES_IN = "In"
EXIT_CODES_NOT_IN = "NotIn"
MAX_FAILURE_RULES = 20
MAX_EXIT_CODES = 255


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
class FailureRule:
    """One rule of ``lifecyclePolicy.failure.rules``: what a replica's end it matches (every
    matcher given must hold) and the action it takes."""

    action: str
    exit_codes_operator: str | None = None  # In, NotIn
    exit_codes: tuple[int, ...] = ()
    replica_types: tuple[str, ...] = ()
    on_disruption: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("action", "onExitCodes", "onReplicaTypes", "onDisruption")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> FailureRule:
        data = expect_dict(data, path, allow_none=False) or {}
        action = opt_str(data, "action", path)
        if action is None:
            raise DecodeError(f"{path}.action: Required value")
        codes = expect_dict(data.get("onExitCodes"), f"{path}.onExitCodes")
        values: list[int] = []
        if codes is not None:
            raw = codes.get("values")
            if not isinstance(raw, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in raw
            ):
                raise DecodeError(f"{path}.onExitCodes.values: expected a list of integers")
            values = list(raw)
        types = data.get("onReplicaTypes")
        if types is not None and (
            not isinstance(types, list) or not all(isinstance(t, str) for t in types)
        ):
            raise DecodeError(f"{path}.onReplicaTypes: expected a list of strings")
        return cls(
            action=action,
            exit_codes_operator=None
            if codes is None
            else (opt_str(codes, "operator", f"{path}.onExitCodes") or ""),
            exit_codes=tuple(values),
            replica_types=tuple(types or ()),
            on_disruption=opt_bool(data, "onDisruption", path),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action}
        if self.exit_codes_operator is not None:
            out["onExitCodes"] = {
                "operator": self.exit_codes_operator,
                "values": list(self.exit_codes),
            }
        if self.replica_types:
            out["onReplicaTypes"] = list(self.replica_types)
        put_present(out, (("onDisruption", self.on_disruption),))
        out.update(json_copy(self.extra))
        return out

    def matches(self, rtype: str, exit_code: int | None, disruption: bool) -> bool:
        """Whether a replica of type ``rtype`` that ended so matches every matcher given
        (``exit_code`` None: its container reported none)."""
        if self.replica_types and rtype.lower() not in {t.lower() for t in self.replica_types}:
            return False
        if self.on_disruption is not None and self.on_disruption != disruption:
            return False
        if self.exit_codes_operator is not None:
            if exit_code is None:
                return False
            inside = exit_code in self.exit_codes
            return inside if self.exit_codes_operator == EXIT_CODES_IN else not inside
        return True


def _limits(data: Any, path: str) -> dict[str, int]:
    limits = expect_dict(data, path) or {}
    for name, value in limits.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise DecodeError(f"{path}.{name}: expected an integer, got {value!r}")
    return dict(limits)


@dataclass(frozen=True)
class FailurePolicy:
    """``lifecyclePolicy.failure``: the rules, first match wins; a disruption no rule matches
    is recreated without counting unless ``countDisruptions``."""

    rules: tuple[FailureRule, ...] = ()
    count_disruptions: bool = False
    # replica type -> the most counted restarts of its replicas (beside backoffLimit)
    replica_type_limits: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("rules", "countDisruptions", "replicaTypeLimits")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> FailurePolicy:
        data = expect_dict(data, path, allow_none=False) or {}
        rules = data.get("rules") or []
        if not isinstance(rules, list):
            raise DecodeError(f"{path}.rules: expected a list")
        return cls(
            rules=tuple(
                FailureRule.from_dict(r, f"{path}.rules[{i}]") for i, r in enumerate(rules)
            ),
            count_disruptions=bool(opt_bool(data, "countDisruptions", path)),
            replica_type_limits=_limits(data.get("replicaTypeLimits"), f"{path}.replicaTypeLimits"),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.rules:
            out["rules"] = [r.to_dict() for r in self.rules]
        if self.count_disruptions:
            out["countDisruptions"] = True
        if self.replica_type_limits:
            out["replicaTypeLimits"] = dict(self.replica_type_limits)
        out.update(json_copy(self.extra))
        return out

    def limit_of(self, rtype: str) -> int | None:
        """The most counted restarts of ``rtype``'s replicas, if limited (any case)."""
        for name, limit in self.replica_type_limits.items():
            if name.lower() == rtype.lower():
                return limit
        return None

    def decide(self, rtype: str, exit_code: int | None, disruption: bool) -> tuple[str, int]:
        """The action for a replica's end and the index of the rule that gave it (-1: the
        default, :data:`ACTION_DEFAULT` for what is not a disruption)."""
        for index, rule in enumerate(self.rules):
            if rule.matches(rtype, exit_code, disruption):
                return rule.action, index
        if disruption:
            return (ACTION_RESTART_REPLICA if self.count_disruptions else ACTION_IGNORE), -1
        return ACTION_DEFAULT, -1


@dataclass(frozen=True)
class StartupPolicy:
    """``lifecyclePolicy.startup``: the blocking reason of a replica that does not start is
    told on the job; with ``deadlineSeconds``, a replica still not started after that long
    fails or restarts the job (``action``)."""

    deadline_seconds: int | None = None
    action: str = ACTION_FAIL_JOB
    # the PS and the Chief (Master) run before the other replicas' pods are created
    ordered: bool | None = None
    # the replicas' headless services publish their pods' addresses before they are ready,
    # so peer names resolve as soon as a pod has an address
    publish_not_ready_addresses: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("deadlineSeconds", "action", "ordered", "publishNotReadyAddresses")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> StartupPolicy:
        data = expect_dict(data, path, allow_none=False) or {}
        return cls(
            deadline_seconds=opt_int(data, "deadlineSeconds", path),
            action=opt_str(data, "action", path) or ACTION_FAIL_JOB,
            ordered=opt_bool(data, "ordered", path),
            publish_not_ready_addresses=opt_bool(data, "publishNotReadyAddresses", path),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        put_present(out, (("deadlineSeconds", self.deadline_seconds),))
        out["action"] = self.action
        put_present(
            out,
            (
                ("ordered", self.ordered),
                ("publishNotReadyAddresses", self.publish_not_ready_addresses),
            ),
        )
        out.update(json_copy(self.extra))
        return out


STARTUP_ACTIONS = (ACTION_FAIL_JOB, ACTION_RESTART_JOB)


@dataclass(frozen=True)
class LifecyclePolicy:
    """``spec.lifecyclePolicy`` (and the copy in force, ``status.lifecyclePolicy``)."""

    success: SuccessRule | None = None
    failure: FailurePolicy | None = None
    startup: StartupPolicy | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("success", "failure", "startup")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> LifecyclePolicy:
        data = expect_dict(data, path, allow_none=False) or {}
        success, failure = data.get("success"), data.get("failure")
        startup = data.get("startup")
        return cls(
            success=None if success is None else SuccessRule.from_dict(success, f"{path}.success"),
            failure=None
            if failure is None
            else FailurePolicy.from_dict(failure, f"{path}.failure"),
            startup=None
            if startup is None
            else StartupPolicy.from_dict(startup, f"{path}.startup"),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.success is not None:
            out["success"] = self.success.to_dict()
        if self.failure is not None:
            out["failure"] = self.failure.to_dict()
        if self.startup is not None:
            out["startup"] = self.startup.to_dict()
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


def check_failure_policy(invalid: str, failure: FailurePolicy, replica_types: set[str]) -> None:
    """Refuse what the CRD's rules refuse in ``lifecyclePolicy.failure``."""
    path = f"spec.{LIFECYCLE_POLICY_FIELD}.failure.rules"
    if len(failure.rules) > MAX_FAILURE_RULES:
        raise LifecyclePolicyError(f"{invalid}: {path}: at most {MAX_FAILURE_RULES} rules")
    types = {t.lower() for t in replica_types}
    for rtype, limit in failure.replica_type_limits.items():
        where = f"spec.{LIFECYCLE_POLICY_FIELD}.failure.replicaTypeLimits.{rtype}"
        if rtype.lower() not in types:
            raise LifecyclePolicyError(f"{invalid}: {where} names no replica type of the job")
        if not 0 <= limit <= 2**31 - 1:
            raise LifecyclePolicyError(f"{invalid}: {where} must be at least 0")
    for index, rule in enumerate(failure.rules):
        here = f"{path}[{index}]"
        if rule.action not in ACTIONS:
            raise LifecyclePolicyError(
                f"{invalid}: {here}.action: unsupported value {rule.action!r}: expected one of "
                f"{', '.join(ACTIONS)}"
            )
        if (
            rule.exit_codes_operator is None
            and not rule.replica_types
            and (rule.on_disruption is None)
        ):
            raise LifecyclePolicyError(
                f"{invalid}: {here}: give at least one of onExitCodes, onReplicaTypes and "
                "onDisruption"
            )
        if rule.exit_codes_operator is not None:
            if rule.exit_codes_operator not in (EXIT_CODES_IN, EXIT_CODES_NOT_IN):
                raise LifecyclePolicyError(
                    f"{invalid}: {here}.onExitCodes.operator must be In or NotIn"
                )
            if not 1 <= len(rule.exit_codes) <= MAX_EXIT_CODES:
                raise LifecyclePolicyError(
                    f"{invalid}: {here}.onExitCodes.values: 1 to {MAX_EXIT_CODES} exit codes"
                )
        for rtype in rule.replica_types:
            if rtype.lower() not in types:
                raise LifecyclePolicyError(
                    f"{invalid}: {here}.onReplicaTypes names {rtype}, which the job does not have"
                )


def check_startup_policy(invalid: str, startup: StartupPolicy) -> None:
    """Refuse what the CRD refuses in ``lifecyclePolicy.startup``."""
    path = f"spec.{LIFECYCLE_POLICY_FIELD}.startup"
    if startup.action not in STARTUP_ACTIONS:
        raise LifecyclePolicyError(
            f"{invalid}: {path}.action: unsupported value {startup.action!r}: expected "
            f"{' or '.join(STARTUP_ACTIONS)}"
        )
    deadline = startup.deadline_seconds
    if deadline is not None and not 1 <= deadline <= 2**31 - 1:
        raise LifecyclePolicyError(f"{invalid}: {path}.deadlineSeconds must be at least 1")


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


@dataclass(frozen=True)
class KindRules:
    """What a kind's lifecycle policy may say: the success rules it takes, the replica types a
    leader rule (``Chief``, ``Master``) needs one of, and the type the worker rules count."""

    success_rules: tuple[str, ...]
    leader_types: tuple[str, ...] = ()
    worker_type: str = "Worker"


def check_lifecycle_policy(
    invalid: str,
    policy: LifecyclePolicy,
    replicas: Mapping[str, int],
    rules: KindRules,
    successpolicy_all_workers: bool = False,
) -> None:
    """Refuse what a kind's CRD refuses in the whole policy, for every kind alike.
    ``replicas``: canonical replica type → replicas (defaults applied)."""
    if policy.failure is not None:
        check_failure_policy(invalid, policy.failure, set(replicas))
    if policy.startup is not None:
        check_startup_policy(invalid, policy.startup)
    if policy.success is not None:
        check_success_rule(
            invalid,
            policy.success,
            rules.success_rules,
            replicas,
            rules.leader_types,
            rules.worker_type,
            successpolicy_all_workers=successpolicy_all_workers,
        )
