"""Validation of a PaddleJob, as training-operator v1.9's PaddleJob webhook has it.

v1.9's validating webhook refuses: a name that is not a DNS-1035 label; a missing
``paddleReplicaSpecs``; a replica type other than ``Master`` or ``Worker`` (exactly so spelled); a
replica spec without containers, a container without an image, a template with no container named
``paddle``; a ``runPolicy.managedBy`` it does not know. It sets no bound on the Master's replicas.
The CRD (``manifests/components/paddlejob/crd.yaml``) refuses the same at admission; the operator
checks them again for clusters that do not enforce the CRD's rules (as D37 for TFJob) and reports a
failure on the job (D8). Beyond v1.9, as for every kind (D81, D132): an empty
``paddleReplicaSpecs``, more than 1000 replicas of a type, restart and clean-pod policies outside
their enums, negative run-policy numbers, a schedulingPolicy out of range, a malformed template, and
names the operator would generate longer than 63 characters.
Its lifecycle policy (``spec.lifecyclePolicy``, D100, D110) is checked as every kind's is, by
the kind's own success rules (:mod:`tf_operator.apis.common.v1.lifecycle`).
"""

from __future__ import annotations

from tf_operator.apis.common.v1.lifecycle import MASTER_WORKER_SUCCESS_RULES, KindRules
from tf_operator.apis.common.v1.validation import (
    ValidationError,
    check_generated_names,
    check_job_lifecycle_policy,
    check_min_task_member,
    check_replica_spec_keys,
    check_replica_template,
    check_run_policy_fields,
    validate_job_name,
)
from tf_operator.apis.paddle.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    KIND,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_ORDER,
    REPLICA_TYPE_WORKER,
    SPECS_FIELD,
)
from tf_operator.apis.paddle.v1.types import PaddleJob, PaddleJobSpec

__all__ = ["ValidationError", "validate_v1_paddlejob", "validate_v1_paddlejob_spec"]

_INVALID = "PaddleJobSpec is not valid"
_SPECS = f"spec.{SPECS_FIELD}"
# its lifecycle policy's success rules and the replica types they name (D110)
_LIFECYCLE_RULES = KindRules(
    MASTER_WORKER_SUCCESS_RULES, (REPLICA_TYPE_MASTER,), REPLICA_TYPE_WORKER
)


def validate_v1_paddlejob_spec(spec: PaddleJobSpec) -> None:
    """Raise :class:`ValidationError` if the spec is not a valid PaddleJob spec."""
    specs = check_replica_spec_keys(_INVALID, _SPECS, spec.paddle_replica_specs, REPLICA_TYPE_ORDER)
    for rtype in REPLICA_TYPE_ORDER:
        if rtype in specs:
            check_replica_template(_INVALID, _SPECS, rtype, specs[rtype], DEFAULT_CONTAINER_NAME)
    if spec.run_policy is not None:
        check_run_policy_fields(_INVALID, "runPolicy.", spec.run_policy)
        check_min_task_member(_INVALID, "runPolicy.", spec.run_policy, set(specs))


def validate_v1_paddlejob(job: PaddleJob) -> None:
    """Validate the name, the spec, then the length of every name the controller will
    generate."""
    validate_job_name(job.name, KIND)
    validate_v1_paddlejob_spec(job.spec)
    check_job_lifecycle_policy(
        _INVALID, job.run_policy.lifecycle, job.spec.paddle_replica_specs or {}, _LIFECYCLE_RULES
    )
    specs = job.spec.paddle_replica_specs or {}
    check_generated_names(_INVALID, KIND, job.name, specs.items())
