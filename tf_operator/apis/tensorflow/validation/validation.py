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
"""

from __future__ import annotations

import re

from tf_operator.apis.common.v1.run_policy import RunPolicy
from tf_operator.apis.common.v1.types import (
    CLEAN_POD_POLICY_ALL,
    CLEAN_POD_POLICY_NONE,
    CLEAN_POD_POLICY_RUNNING,
    RESTART_POLICY_ALWAYS,
    RESTART_POLICY_EXIT_CODE,
    RESTART_POLICY_NEVER,
    RESTART_POLICY_ON_FAILURE,
    ReplicaSpec,
)
from tf_operator.apis.tensorflow.v1.constants import (
    DEFAULT_CONTAINER_NAME,
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
from tf_operator.k8s.quantity import is_quantity

# A DNS-1035 label (service names) is at most 63 characters.
MAX_GENERATED_NAME_LENGTH = 63
# The most replicas of one type, as manifests/base/crd.yaml says (`maximum: 1000`): every pod's
# TF_CONFIG lists every replica, so a job costs O(replicas^2) bytes; 1000 keeps a TF_CONFIG
# near 50 KB and a job's sync bounded.
MAX_REPLICAS = 1000
# The CRD's `format: int32` and `format: int64`.
MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)
MAX_INT64 = 2**63 - 1
# Service names are DNS-1035 labels: the job name must be one for `<job>-<type>-<index>` to be.
_DNS_1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_RESTART_POLICIES = (
    RESTART_POLICY_ALWAYS,
    RESTART_POLICY_ON_FAILURE,
    RESTART_POLICY_NEVER,
    RESTART_POLICY_EXIT_CODE,
)
_CLEAN_POD_POLICIES = (CLEAN_POD_POLICY_ALL, CLEAN_POD_POLICY_RUNNING, CLEAN_POD_POLICY_NONE)
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
        _check_replicas(key, canonical, value)
        if canonical in (REPLICA_TYPE_CHIEF, REPLICA_TYPE_MASTER):
            found_chief += 1
        if canonical == REPLICA_TYPE_EVAL:
            found_evaluator += 1 if value.replicas is None else value.replicas
        _check_containers(key, value)
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
    replicas = value.replicas
    if replicas is not None and replicas < 0:
        raise ValidationError(f"{_INVALID}: replicas of {key} must not be negative")
    if replicas is not None and replicas > MAX_REPLICAS:
        raise ValidationError(
            f"{_INVALID}: replicas of {key} must be at most {MAX_REPLICAS} (got {replicas})"
        )
    if canonical in (REPLICA_TYPE_CHIEF, REPLICA_TYPE_MASTER) and (replicas or 0) > 1:
        raise ValidationError(f"{_INVALID}: replicas of {key} must be at most 1")
    if canonical in (REPLICA_TYPE_PS, REPLICA_TYPE_WORKER) and replicas == 0:
        raise ValidationError(f"{_INVALID}: replicas of {key} must be at least 1")
    if value.restart_policy and value.restart_policy not in _RESTART_POLICIES:
        raise ValidationError(
            f"{_INVALID}: restartPolicy of {key} must be one of {', '.join(_RESTART_POLICIES)}"
            f" (got {value.restart_policy})"
        )


def _check_containers(key: str, value: ReplicaSpec) -> None:
    """What the CRD declares of a template (containers are objects, their names strings), and
    the shape of the ports the operator reads (a list of objects) (D37)."""
    containers = value.template["spec"]["containers"]  # a non-empty list: checked before
    if not all(isinstance(c, dict) for c in containers):
        raise ValidationError(f"{_INVALID}: containers of {key} must be a list of objects")
    for container in containers:
        name = container.get("name")
        if name is not None and not isinstance(name, str):
            raise ValidationError(f"{_INVALID}: a container name of {key} is not a string")
        ports = container.get("ports")
        if (
            name == DEFAULT_CONTAINER_NAME
            and ports is not None
            and (not isinstance(ports, list) or not all(isinstance(p, dict) for p in ports))
        ):
            raise ValidationError(
                f"{_INVALID}: ports of the {DEFAULT_CONTAINER_NAME} container of {key} must be "
                "a list of objects"
            )


def _check_run_policy(spec: TFJobSpec) -> None:
    """The CRD's bounds on the run-policy fields, in either placement, and on the other
    fields of training-operator v1.9 (D55)."""
    placements = [("", spec.top_level_run_policy())]
    if spec.run_policy is not None:
        placements.append(("runPolicy.", spec.run_policy))
    for prefix, policy in placements:
        _check_run_policy_fields(prefix, policy)
    if spec.success_policy is not None and spec.success_policy not in SUCCESS_POLICIES:
        raise ValidationError(
            f'{_INVALID}: successPolicy must be "" or {SUCCESS_POLICY_ALL_WORKERS}'
            f" (got {spec.success_policy})"
        )


def _check_run_policy_fields(prefix: str, policy: RunPolicy) -> None:
    for field, value, maximum in (
        ("activeDeadlineSeconds", policy.active_deadline_seconds, MAX_INT64),
        ("backoffLimit", policy.backoff_limit, MAX_INT32),
        ("ttlSecondsAfterFinished", policy.ttl_seconds_after_finished, MAX_INT32),
    ):
        if value is not None and not 0 <= value <= maximum:
            raise ValidationError(f"{_INVALID}: {prefix}{field} must be within [0, {maximum}]")
    clean = policy.clean_pod_policy
    if clean is not None and clean not in _CLEAN_POD_POLICIES:
        raise ValidationError(
            f"{_INVALID}: {prefix}cleanPodPolicy must be one of "
            f"{', '.join(_CLEAN_POD_POLICIES)} (got {clean})"
        )
    scheduling = policy.scheduling_policy
    if scheduling is None:
        return
    for field, value, low in (
        ("minAvailable", scheduling.min_available, 0),
        ("scheduleTimeoutSeconds", scheduling.schedule_timeout_seconds, MIN_INT32),
    ):
        if value is not None and not low <= value <= MAX_INT32:
            raise ValidationError(
                f"{_INVALID}: {prefix}schedulingPolicy.{field} must be within [{low}, {MAX_INT32}]"
            )
    for name, amount in (scheduling.min_resources or {}).items():
        if not is_quantity(amount):
            raise ValidationError(
                f"{_INVALID}: {prefix}schedulingPolicy.minResources.{name} is not a quantity "
                f"(got {amount!r})"
            )


def validate_job_name(name: str) -> None:
    """Refuse a name that cannot yield valid Service names ``<name>-<type>-<index>``."""
    if not _DNS_1035_LABEL.fullmatch(name):
        raise ValidationError(
            f"TFJob name {name!r} is not valid: it must be a DNS-1035 label (lower case "
            "letters, digits and '-', starting with a letter and ending with a letter or "
            "digit), as the Services named <job>-<type>-<index> after it must be"
        )


def validate_v1_tfjob(job: TFJob) -> None:
    """Validate the name, the spec, then the length of every name the controller will
    generate."""
    validate_job_name(job.name)
    validate_v1_tfjob_spec(job.spec)
    for key, value in (job.spec.tf_replica_specs or {}).items():
        replicas = 1 if value is None or value.replicas is None else value.replicas
        longest = f"{job.name}-{key.lower()}-{max(replicas - 1, 0)}".replace("/", "-")
        if len(longest) > MAX_GENERATED_NAME_LENGTH:
            raise ValidationError(
                f"{_INVALID}: generated name {longest} is longer than "
                f"{MAX_GENERATED_NAME_LENGTH} characters; use a shorter TFJob name"
            )
