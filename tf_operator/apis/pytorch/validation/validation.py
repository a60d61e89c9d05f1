"""Validation of a PyTorchJob, as training-operator v1.9's PyTorchJob webhook has it.

v1.9's validating webhook refuses: a name that is not a DNS-1035 label; a missing
``pytorchReplicaSpecs``; a replica type other than ``Master`` or ``Worker`` (exactly so
spelled); a replica spec without containers, a container without an image, a template with no
container named ``pytorch``; a Master whose ``replicas`` is not 1 (unset included); a Worker
with fewer than 1; an ``elasticPolicy`` without a Worker, or with the deprecated
``nProcPerNode`` beside ``spec.nprocPerNode``; a ``runPolicy.managedBy`` it does not know.
The CRD (``manifests/components/pytorchjob/crd.yaml``) refuses the same at admission, with
v1.9's field paths in its messages; the operator checks them again for clusters that do not
enforce the CRD's rules (as D37 for TFJob) and reports a failure on the job (D8). Beyond v1.9,
as for TFJob (D81): an empty ``pytorchReplicaSpecs``, more than 1000 replicas of a type,
restart and clean-pod policies outside their enums, negative run-policy numbers, a
schedulingPolicy out of range, a malformed template, and names the operator would generate
longer than 63 characters.
"""

from __future__ import annotations

from tf_operator.apis.common.v1.lifecycle import PYTORCH_SUCCESS_RULES, KindRules
from tf_operator.apis.common.v1.types import ReplicaSpec
from tf_operator.apis.common.v1.validation import (
    ValidationError,
    check_containers,
    check_generated_names,
    check_job_lifecycle_policy,
    check_min_task_member,
    check_replicas,
    check_run_policy_fields,
    validate_job_name,
)
from tf_operator.apis.pytorch.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    KIND,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_ORDER,
    REPLICA_TYPE_WORKER,
)
from tf_operator.apis.pytorch.v1.types import PyTorchJob, PyTorchJobSpec

__all__ = ["ValidationError", "validate_v1_pytorchjob", "validate_v1_pytorchjob_spec"]

_INVALID = "PyTorchJobSpec is not valid"
_SPECS = "spec.pytorchReplicaSpecs"
_LIFECYCLE_RULES = KindRules(PYTORCH_SUCCESS_RULES, (REPLICA_TYPE_MASTER,), REPLICA_TYPE_WORKER)


def validate_v1_pytorchjob_spec(spec: PyTorchJobSpec) -> None:
    """Raise :class:`ValidationError` if the spec is not a valid PyTorchJob spec."""
    specs = spec.pytorch_replica_specs
    if specs is None:
        raise ValidationError(f"{_INVALID}: {_SPECS}: Required value: must be required")
    if not specs:
        raise ValidationError(f"{_INVALID}: {_SPECS}: at least one replica type is required")
    for rtype in sorted(specs):
        if rtype not in REPLICA_TYPE_ORDER:
            supported = ", ".join(f'"{t}"' for t in REPLICA_TYPE_ORDER)
            raise ValidationError(
                f'{_INVALID}: {_SPECS}[{rtype}]: Unsupported value: "{rtype}": supported '
                f"values: {supported}"
            )
    for rtype in REPLICA_TYPE_ORDER:
        if rtype in specs:
            _check_replica_spec(rtype, specs[rtype])
    _check_elastic_policy(spec)
    if spec.run_policy is not None:
        check_run_policy_fields(_INVALID, "runPolicy.", spec.run_policy)
        check_min_task_member(_INVALID, "runPolicy.", spec.run_policy, set(specs))


def _check_replica_spec(rtype: str, value: ReplicaSpec | None) -> None:
    path = f"{_SPECS}[{rtype}]"
    containers = f"{path}.template.spec.containers"
    if value is None or not value.containers():
        raise ValidationError(f"{_INVALID}: {containers}: Required value: must be specified")
    check_replicas(_INVALID, rtype, value)
    check_containers(_INVALID, rtype, value, DEFAULT_CONTAINER_NAME)
    named_pytorch = False
    for index, container in enumerate(value.containers()):
        if not container.get("image"):
            raise ValidationError(
                f"{_INVALID}: {containers}[{index}].image: Required value: must be required"
            )
        named_pytorch = named_pytorch or container.get("name") == DEFAULT_CONTAINER_NAME
    if not named_pytorch:
        raise ValidationError(
            f"{_INVALID}: {containers}: Required value: must have at least one container with "
            f"name {DEFAULT_CONTAINER_NAME}"
        )
    if rtype == REPLICA_TYPE_MASTER and value.replicas != 1:
        raise ValidationError(f"{_INVALID}: {path}.replicas: Forbidden: must be 1")
    if rtype == REPLICA_TYPE_WORKER and value.replicas is not None and value.replicas < 1:
        raise ValidationError(f"{_INVALID}: {path}.replicas: Forbidden: must be at least 1")


def _check_elastic_policy(spec: PyTorchJobSpec) -> None:
    elastic = spec.elastic_policy
    if elastic is None:
        return
    if REPLICA_TYPE_WORKER not in (spec.pytorch_replica_specs or {}):
        raise ValidationError(
            f"{_INVALID}: {_SPECS}[{REPLICA_TYPE_WORKER}]: Required value: must be configured "
            "if elastic policy is used"
        )
    if elastic.n_proc_per_node is not None and spec.nproc_per_node is not None:
        raise ValidationError(
            f"{_INVALID}: spec.elasticPolicy.nProcPerNode: Forbidden: must not be used with "
            "spec.nprocPerNode"
        )


def _check_lifecycle_policy(job: PyTorchJob) -> None:
    """The lifecycle policy in force against the job's replica types (D100)."""
    check_job_lifecycle_policy(
        _INVALID, job.run_policy.lifecycle, job.spec.pytorch_replica_specs or {}, _LIFECYCLE_RULES
    )


def validate_v1_pytorchjob(job: PyTorchJob) -> None:
    """Validate the name, the spec, then the length of every name the controller will
    generate."""
    validate_job_name(job.name, KIND)
    validate_v1_pytorchjob_spec(job.spec)
    _check_lifecycle_policy(job)
    specs = job.spec.pytorch_replica_specs or {}
    check_generated_names(_INVALID, KIND, job.name, specs.items())
