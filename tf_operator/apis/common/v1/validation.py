"""Validation rules every job kind shares: the job's name, replica counts and restart policy,
the shape of its templates' containers, the run policy's bounds (D37, D55).

A kind's validation (:mod:`tf_operator.apis.tensorflow.validation.validation`,
:mod:`tf_operator.apis.pytorch.validation.validation`) calls these with its own message
prefix (``TFJobSpec is not valid``) and default container name, so each kind's messages read
as they always did. Each rule refuses what the kind's CRD refuses, for clusters that do not
enforce its schema and CEL rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from tf_operator.apis.common.v1.lifecycle import (
    KindRules,
    LifecyclePolicy,
    LifecyclePolicyError,
    check_lifecycle_policy,
)
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
from tf_operator.k8s.client.deepjson import deeper_than, deepest
from tf_operator.k8s.quantity import is_quantity

# A DNS-1035 label (service names) is at most 63 characters.
MAX_GENERATED_NAME_LENGTH = 63
# The most replicas of one type, as the CRDs say (`maximum: 1000`): a TFJob's every pod lists
# every replica in TF_CONFIG, so a job costs O(replicas^2) bytes; 1000 keeps a TF_CONFIG near
# 50 KB and a job's sync bounded.
MAX_REPLICAS = 1000
# The CRD's `format: int32` and `format: int64`.
MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1
# The deepest job spec the operator runs (levels of objects and arrays; a real pod template
# needs about 15). kube-apiserver stores objects nested up to 10,000 levels, but the operator
# copies templates into Python structures and pods, which recurse, and orjson writes 254 levels
# at most: a deeper spec fails the job with a message saying so (D70).
MAX_SPEC_NESTING = 100
# Service names are DNS-1035 labels: the job name must be one for `<job>-<type>-<index>` to be.
_DNS_1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
RESTART_POLICIES = (
    RESTART_POLICY_ALWAYS,
    RESTART_POLICY_ON_FAILURE,
    RESTART_POLICY_NEVER,
    RESTART_POLICY_EXIT_CODE,
)
CLEAN_POD_POLICIES = (CLEAN_POD_POLICY_ALL, CLEAN_POD_POLICY_RUNNING, CLEAN_POD_POLICY_NONE)


class ValidationError(ValueError):
    """The job's spec breaks a validation rule; the text says which."""


def validate_job_name(name: str, kind: str) -> None:
    """Refuse a name that cannot yield valid Service names ``<name>-<type>-<index>``."""
    if not _DNS_1035_LABEL.fullmatch(name):
        raise ValidationError(
            f"{kind} name {name!r} is not valid: it must be a DNS-1035 label (lower case "
            "letters, digits and '-', starting with a letter and ending with a letter or "
            "digit), as the Services named <job>-<type>-<index> after it must be"
        )


def check_generated_names(
    invalid: str, kind: str, name: str, specs: Iterable[tuple[str, ReplicaSpec | None]]
) -> None:
    """Refuse a job whose longest pod or service name would exceed 63 characters (D29)."""
    for key, value in specs:
        replicas = 1 if value is None or value.replicas is None else value.replicas
        longest = f"{name}-{key.lower()}-{max(replicas - 1, 0)}".replace("/", "-")
        if len(longest) > MAX_GENERATED_NAME_LENGTH:
            raise ValidationError(
                f"{invalid}: generated name {longest} is longer than "
                f"{MAX_GENERATED_NAME_LENGTH} characters; use a shorter {kind} name"
            )


def check_replicas(invalid: str, key: str, value: ReplicaSpec) -> None:
    """The CRD's bounds on one replica spec whatever its type: replicas and restart policy."""
    replicas = value.replicas
    if replicas is not None and replicas < 0:
        raise ValidationError(f"{invalid}: replicas of {key} must not be negative")
    if replicas is not None and replicas > MAX_REPLICAS:
        raise ValidationError(
            f"{invalid}: replicas of {key} must be at most {MAX_REPLICAS} (got {replicas})"
        )
    if value.restart_policy and value.restart_policy not in RESTART_POLICIES:
        raise ValidationError(
            f"{invalid}: restartPolicy of {key} must be one of {', '.join(RESTART_POLICIES)}"
            f" (got {value.restart_policy})"
        )


def check_nesting(invalid: str, spec: object) -> None:
    """A spec nested deeper than ``MAX_SPEC_NESTING`` levels is refused, naming where (D70).
    Measured without recursing, before anything else reads the spec."""
    if not deeper_than(spec, MAX_SPEC_NESTING):
        return
    depth, path = deepest(spec)
    shown = ".".join(str(p) for p in path[:8]) + (".…" if len(path) > 8 else "")
    raise ValidationError(
        f"{invalid}: spec nests {depth} levels of objects and arrays (at spec.{shown}); "
        f"the operator runs specs at most {MAX_SPEC_NESTING} levels deep"
    )


def check_containers(invalid: str, key: str, value: ReplicaSpec, container_name: str) -> None:
    """What the CRD declares of a template (containers are objects, their names strings), and
    the shape of the ports the operator reads (a list of objects) (D37)."""
    containers = value.template["spec"]["containers"]  # a non-empty list: checked before
    if not all(isinstance(c, dict) for c in containers):
        raise ValidationError(f"{invalid}: containers of {key} must be a list of objects")
    for container in containers:
        name = container.get("name")
        if name is not None and not isinstance(name, str):
            raise ValidationError(f"{invalid}: a container name of {key} is not a string")
        ports = container.get("ports")
        if (
            name == container_name
            and ports is not None
            and (not isinstance(ports, list) or not all(isinstance(p, dict) for p in ports))
        ):
            raise ValidationError(
                f"{invalid}: ports of the {container_name} container of {key} must be "
                "a list of objects"
            )
        check_container_ports(invalid, key, container)


def check_container_ports(invalid: str, key: str, container: dict[str, object]) -> None:
    """Every ``containerPort`` an integer in 1..65535, as the CRD's schema says and as
    kube-apiserver requires of a pod: a port of 70000, 0, ``true``, 2222.5 or ``"2222"``
    would otherwise reach TF_CONFIG and the replica's Service (D69)."""
    ports = container.get("ports")
    if not isinstance(ports, list):
        return
    for port in ports:
        if not isinstance(port, dict):
            continue
        number = port.get("containerPort")
        if isinstance(number, bool) or not isinstance(number, int) or not 0 < number <= 65535:
            raise ValidationError(
                f"{invalid}: port {port.get('name', '')!r} of container "
                f"{container.get('name', '')!r} in {key}: containerPort must be an integer "
                f"between 1 and 65535 (got {number!r})"
            )


def check_run_policy_fields(invalid: str, prefix: str, policy: RunPolicy) -> None:
    """The CRD's bounds on one placement of the run policy (``prefix``: ``""`` or
    ``runPolicy.``)."""
    for field, value, maximum in (
        ("activeDeadlineSeconds", policy.active_deadline_seconds, MAX_INT64),
        ("backoffLimit", policy.backoff_limit, MAX_INT32),
        ("ttlSecondsAfterFinished", policy.ttl_seconds_after_finished, MAX_INT32),
    ):
        if value is not None and not 0 <= value <= maximum:
            raise ValidationError(f"{invalid}: {prefix}{field} must be within [0, {maximum}]")
    clean = policy.clean_pod_policy
    if clean is not None and clean not in CLEAN_POD_POLICIES:
        raise ValidationError(
            f"{invalid}: {prefix}cleanPodPolicy must be one of "
            f"{', '.join(CLEAN_POD_POLICIES)} (got {clean})"
        )
    scheduling = policy.scheduling_policy
    if scheduling is None:
        return
    # A gang timeout below a second can never be waited out: training-operator v1.9 passed it
    # to the PodGroup, where coscheduling rejects every member at Permit (D150).
    for field, value, low in (
        ("minAvailable", scheduling.min_available, 0),
        ("scheduleTimeoutSeconds", scheduling.schedule_timeout_seconds, 1),
    ):
        if value is not None and not low <= value <= MAX_INT32:
            raise ValidationError(
                f"{invalid}: {prefix}schedulingPolicy.{field} must be within [{low}, {MAX_INT32}]"
            )
    for name, amount in (scheduling.min_resources or {}).items():
        if not is_quantity(amount):
            raise ValidationError(
                f"{invalid}: {prefix}schedulingPolicy.minResources.{name} is not a quantity "
                f"(got {amount!r})"
            )


def check_min_task_member(
    invalid: str, prefix: str, policy: RunPolicy, replica_keys: set[str]
) -> None:
    """``schedulingPolicy.minTaskMember`` (the operator's addition, D77) names the job's
    replica types (in any case, as their keys may be written) with counts the CRD allows."""
    scheduling = policy.scheduling_policy
    types = {key.lower() for key in replica_keys}
    for name, count in ((scheduling.min_task_member if scheduling else None) or {}).items():
        path = f"{prefix}schedulingPolicy.minTaskMember.{name}"
        if name.lower() not in types:
            raise ValidationError(f"{invalid}: {path} names no replica type of the job")
        if not 0 <= count <= MAX_INT32:
            raise ValidationError(f"{invalid}: {path} must be within [0, {MAX_INT32}]")


def check_replica_spec_keys(
    invalid: str, specs_path: str, specs: dict[str, ReplicaSpec | None] | None, known: Sequence[str]
) -> dict[str, ReplicaSpec | None]:
    """training-operator v1.9's webhooks: the replica specs are required, not empty, and keyed
    by the kind's replica types exactly so spelled; returns them."""
    if specs is None:
        raise ValidationError(f"{invalid}: {specs_path}: Required value: must be required")
    if not specs:
        raise ValidationError(f"{invalid}: {specs_path}: at least one replica type is required")
    for rtype in sorted(specs):
        if rtype not in known:
            supported = ", ".join(f'"{t}"' for t in known)
            raise ValidationError(
                f'{invalid}: {specs_path}[{rtype}]: Unsupported value: "{rtype}": supported '
                f"values: {supported}"
            )
    return specs


def check_replica_template(
    invalid: str, specs_path: str, rtype: str, value: ReplicaSpec | None, container_name: str
) -> ReplicaSpec:
    """training-operator v1.9's webhooks on one replica spec: containers given, each with an
    image, one named ``container_name``; and the CRD's bounds every kind shares."""
    containers = f"{specs_path}[{rtype}].template.spec.containers"
    if value is None or not value.containers():
        raise ValidationError(f"{invalid}: {containers}: Required value: must be specified")
    check_replicas(invalid, rtype, value)
    check_containers(invalid, rtype, value, container_name)
    named = False
    for index, container in enumerate(value.containers()):
        if not container.get("image"):
            raise ValidationError(
                f"{invalid}: {containers}[{index}].image: Required value: must be required"
            )
        named = named or container.get("name") == container_name
    if not named:
        raise ValidationError(
            f"{invalid}: {containers}: Required value: must have at least one container with "
            f"name {container_name}"
        )
    return value


def check_job_lifecycle_policy(
    invalid: str,
    policy: LifecyclePolicy | None,
    specs: Mapping[str, ReplicaSpec | None],
    rules: KindRules,
    canonical: Callable[[str], str] = str,
    successpolicy_all_workers: bool = False,
) -> None:
    """The lifecycle policy in force against the job's replica types (D100), as every kind's
    CRD checks it; ``canonical`` maps a replica spec's key to the type the rules name."""
    if policy is None:
        return
    replicas = {
        canonical(key): 1 if spec is None or spec.replicas is None else spec.replicas
        for key, spec in specs.items()
    }
    try:
        check_lifecycle_policy(invalid, policy, replicas, rules, successpolicy_all_workers)
    except LifecyclePolicyError as err:
        raise ValidationError(str(err)) from err
