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
* a job whose generated pod/service names exceed 63 characters is rejected (D29).
"""

from __future__ import annotations

from tf_operator.apis.tensorflow.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    REPLICA_TYPE_CHIEF,
    REPLICA_TYPE_EVAL,
    REPLICA_TYPE_MASTER,
)
from tf_operator.apis.tensorflow.v1.defaults import canonical_replica_type
from tf_operator.apis.tensorflow.v1.types import TFJob, TFJobSpec, ordered_replica_types

# A DNS-1035 label (service names) is at most 63 characters.
MAX_GENERATED_NAME_LENGTH = 63
_INVALID = "TFJobSpec is not valid"


class ValidationError(ValueError):
    """The TFJob spec breaks a validation rule; the text says which."""


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
        if value.replicas is not None and value.replicas < 0:
            raise ValidationError(f"{_INVALID}: replicas of {key} must not be negative")
        if canonical in (REPLICA_TYPE_CHIEF, REPLICA_TYPE_MASTER):
            found_chief += 1
        if canonical == REPLICA_TYPE_EVAL:
            found_evaluator += 1 if value.replicas is None else value.replicas
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


def validate_v1_tfjob(job: TFJob) -> None:
    """Validate the spec, then the length of every name the controller will generate."""
    validate_v1_tfjob_spec(job.spec)
    for key, value in (job.spec.tf_replica_specs or {}).items():
        replicas = 1 if value is None or value.replicas is None else value.replicas
        longest = f"{job.name}-{key.lower()}-{max(replicas - 1, 0)}".replace("/", "-")
        if len(longest) > MAX_GENERATED_NAME_LENGTH:
            raise ValidationError(
                f"{_INVALID}: generated name {longest} is longer than "
                f"{MAX_GENERATED_NAME_LENGTH} characters; use a shorter TFJob name"
            )
