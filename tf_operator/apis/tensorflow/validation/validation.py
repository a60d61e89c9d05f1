"""Validation of a TFJob spec (v0.5.3 ``ValidateV1TFJobSpec``, divergences D6 and D29).

The v0.5.3 rules and error texts are kept (a missing ``tfReplicaSpecs`` is now named in its
message, like every other rule's field, D8): a null replica spec or
one without containers; a container without image; no container named ``tensorflow``; more
than one Chief/Master; more than one Evaluator replica. Messages name the replica type as the
user wrote the key.

Fixes over v0.5.3 (which validated the raw, un-normalised map):
* keys are compared case-insensitively, so ``chief`` plus ``Master`` count as two chiefs and an
  ``evaluator`` key counts as an evaluator (D6);
* an Evaluator without ``replicas`` counts as 1 (its default) instead of crashing (D6);
* two keys spelling the same type (``worker`` and ``Worker``) and unknown types are rejected (D6);
* an empty ``tfReplicaSpecs`` map and negative ``replicas`` are rejected (D6);
* a job whose generated pod/service names exceed 63 characters is rejected (D29);
* everything the shipped CRD's schema and CEL rules refuse is refused here too, for clusters
  that do not enforce them (divergence D37): a job name that is not a DNS-1035 label (its
  Service names would be refused), more than ``MAX_REPLICAS`` replicas of a type, more than
  one Chief, Master or Evaluator replica, no PS or Worker replica, restart and clean-pod
  policies outside their enums, negative (or out-of-format) ``backoffLimit``,
  ``activeDeadlineSeconds`` and ``ttlSecondsAfterFinished`` (in either placement: on the
  spec or in v1.9's ``runPolicy``, D55), a ``successPolicy`` other than ``""`` or
  ``AllWorkers``, and schedulingPolicy numbers out of range or resources that are no quantity. So no number a user wrote sizes
  the work of a sync before it is checked. The two placements of one field disagreeing is
  refused when the run policy is normalised (at decoding).

The rules every kind shares are in :mod:`tf_operator.apis.common.v1.validation`.
"""

from __future__ import annotations

from tf_operator.apis.common.v1.lifecycle import TF_SUCCESS_RULES, KindRules
from tf_operator.apis.common.v1.types import ReplicaSpec
from tf_operator.apis.common.v1.validation import (
    MAX_GENERATED_NAME_LENGTH,
    MAX_REPLICAS,
    ValidationError,
    check_containers,
    check_generated_names,
    check_job_lifecycle_policy,
    check_min_task_member,
    check_replicas,
    check_run_policy_fields,
    validate_job_name,
)
from tf_operator.apis.tensorflow.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    KIND,
    REPLICA_TYPE_CHIEF,
    REPLICA_TYPE_EVAL,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_PS,
    REPLICA_TYPE_WORKER,
    SUCCESS_POLICIES,
    SUCCESS_POLICY_ALL_WORKERS,
)
from tf_operator.apis.tensorflow.v1.defaults import canonical_replica_type
from tf_operator.apis.tensorflow.v1.types import TFJob, TFJobSpec, ordered_replica_types

__all__ = [
    "MAX_GENERATED_NAME_LENGTH",
    "MAX_REPLICAS",
    "ValidationError",
    "validate_v1_tfjob",
    "validate_v1_tfjob_spec",
]

_INVALID = "TFJobSpec is not valid"
_LIFECYCLE_RULES = KindRules(
    TF_SUCCESS_RULES, (REPLICA_TYPE_CHIEF, REPLICA_TYPE_MASTER), REPLICA_TYPE_WORKER
)


def validate_v1_tfjob_spec(spec: TFJobSpec) -> None:
    """Raise :class:`ValidationError` if the spec is not a valid TFJob spec."""
    specs = spec.tf_replica_specs
    if specs is None:
        # v0.5.3 said only "TFJobSpec is not valid" here (divergence D8).
        raise ValidationError(f"{_INVALID}: tfReplicaSpecs is required")
    if not specs:
        # v0.5.3 accepted {} and then never synced the job; reject it instead.
        raise ValidationError(f"{_INVALID}: at least one replica type is required")
    seen: dict[str, str] = {}
    for key in sorted(specs):
        canonical = canonical_replica_type(key)
        if canonical is None:
            raise ValidationError(f"{_INVALID}: unknown replica type {key}")
        if canonical in seen:
            raise ValidationError(
                f"{_INVALID}: replica type {canonical} is given twice ({seen[canonical]}, {key})"
            )
        seen[canonical] = key
    found_chief = 0
    found_evaluator = 0
    for canonical in ordered_replica_types(seen):
        key = seen[canonical]
        value = specs[key]
        if value is None or not value.containers():
            raise ValidationError(f"{_INVALID}: containers definition expected in {key}")
        _check_replicas(key, canonical, value)
        if canonical in (REPLICA_TYPE_CHIEF, REPLICA_TYPE_MASTER):
            found_chief += 1
        if canonical == REPLICA_TYPE_EVAL:
            found_evaluator += 1 if value.replicas is None else value.replicas
        check_containers(_INVALID, key, value, DEFAULT_CONTAINER_NAME)
        named_tensorflow = 0
        for container in value.containers():
            if not container.get("image"):
                raise ValidationError(f"{_INVALID}: Image is undefined in the container of {key}")
            if container.get("name") == DEFAULT_CONTAINER_NAME:
                named_tensorflow += 1
        if named_tensorflow == 0:
            raise ValidationError(
                f"{_INVALID}: There is no container named {DEFAULT_CONTAINER_NAME} in {key}"
            )
    if found_chief > 1:
        raise ValidationError(f"{_INVALID}: more than 1 chief/master found")
    if found_evaluator > 1:
        raise ValidationError(f"{_INVALID}: more than 1 evaluator found")
    _check_run_policy(spec)


def _check_replicas(key: str, canonical: str, value: ReplicaSpec) -> None:
    """The CRD's bounds on one replica spec: replicas and restart policy."""
    check_replicas(_INVALID, key, value)
    replicas = value.replicas
    if canonical in (REPLICA_TYPE_CHIEF, REPLICA_TYPE_MASTER) and (replicas or 0) > 1:
        raise ValidationError(f"{_INVALID}: replicas of {key} must be at most 1")
    if canonical in (REPLICA_TYPE_PS, REPLICA_TYPE_WORKER) and replicas == 0:
        raise ValidationError(f"{_INVALID}: replicas of {key} must be at least 1")


def _check_run_policy(spec: TFJobSpec) -> None:
    """The CRD's bounds on the run-policy fields, in either placement, and on the other
    fields of training-operator v1.9 (D55)."""
    placements = [("", spec.top_level_run_policy())]
    if spec.run_policy is not None:
        placements.append(("runPolicy.", spec.run_policy))
    for prefix, policy in placements:
        check_run_policy_fields(_INVALID, prefix, policy)
        check_min_task_member(_INVALID, prefix, policy, set(spec.tf_replica_specs or {}))
    if spec.success_policy is not None and spec.success_policy not in SUCCESS_POLICIES:
        raise ValidationError(
            f'{_INVALID}: successPolicy must be "" or {SUCCESS_POLICY_ALL_WORKERS}'
            f" (got {spec.success_policy})"
        )


def _check_lifecycle_policy(job: TFJob) -> None:
    """The lifecycle policy in force against the job's replica types (D100)."""
    check_job_lifecycle_policy(
        _INVALID,
        job.run_policy.lifecycle,
        job.spec.tf_replica_specs or {},
        _LIFECYCLE_RULES,
        canonical=lambda key: canonical_replica_type(key) or key,
        successpolicy_all_workers=job.spec.success_policy == SUCCESS_POLICY_ALL_WORKERS,
    )


def validate_v1_tfjob(job: TFJob) -> None:
    """Validate the name, the spec, then the length of every name the controller will
    generate."""
    validate_job_name(job.name, KIND)
    validate_v1_tfjob_spec(job.spec)
    _check_lifecycle_policy(job)
    check_generated_names(_INVALID, KIND, job.name, (job.spec.tf_replica_specs or {}).items())
