"""Validation of a JAXJob, as training-operator v1.9's JAXJob webhook has it.

v1.9's validating webhook refuses: a name that is not a DNS-1035 label; a missing
``jaxReplicaSpecs``; a replica type other than ``Worker`` (exactly so spelled); a replica spec
without containers, a container without an image, a template with no container named ``jax``. The
CRD (``manifests/components/jaxjob/crd.yaml``) refuses the same at admission; the operator checks
them again for clusters that do not enforce the CRD's rules (as D37 for TFJob) and reports a failure
on the job (D8). Beyond v1.9, as for every kind (D81, D131): an empty ``jaxReplicaSpecs``, more than
1000 replicas, restart and clean-pod policies outside their enums, negative run-policy numbers, a
schedulingPolicy out of range, a malformed template, names the operator would generate longer than
63 characters, and (v1.9's JAXJob webhook alone left it out) a ``runPolicy.managedBy`` the other
kinds refuse.
Its lifecycle policy (``spec.lifecyclePolicy``, D100, D110) is checked as every kind's is, by
the kind's own success rules (:mod:`tf_operator.apis.common.v1.lifecycle`).
"""

from __future__ import annotations

from tf_operator.apis.common.v1.lifecycle import WORKERS_ONLY_SUCCESS_RULES, KindRules
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
from tf_operator.apis.jax.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    KIND,
    REPLICA_TYPE_ORDER,
    REPLICA_TYPE_WORKER,
    SPECS_FIELD,
)
from tf_operator.apis.jax.v1.types import JAXJob, JAXJobSpec

__all__ = ["ValidationError", "validate_v1_jaxjob", "validate_v1_jaxjob_spec"]

_INVALID = "JAXJobSpec is not valid"
_SPECS = f"spec.{SPECS_FIELD}"
# its lifecycle policy's success rules and the replica types they name (D110)
_LIFECYCLE_RULES = KindRules(WORKERS_ONLY_SUCCESS_RULES, (), REPLICA_TYPE_WORKER)


def validate_v1_jaxjob_spec(spec: JAXJobSpec) -> None:
    """Raise :class:`ValidationError` if the spec is not a valid JAXJob spec."""
    specs = check_replica_spec_keys(_INVALID, _SPECS, spec.jax_replica_specs, REPLICA_TYPE_ORDER)
    for rtype in REPLICA_TYPE_ORDER:
        if rtype in specs:
            check_replica_template(_INVALID, _SPECS, rtype, specs[rtype], DEFAULT_CONTAINER_NAME)
    if spec.run_policy is not None:
        check_run_policy_fields(_INVALID, "runPolicy.", spec.run_policy)
        check_min_task_member(_INVALID, "runPolicy.", spec.run_policy, set(specs))


def validate_v1_jaxjob(job: JAXJob) -> None:
    """Validate the name, the spec, then the length of every name the controller will
    generate."""
    validate_job_name(job.name, KIND)
    validate_v1_jaxjob_spec(job.spec)
    check_job_lifecycle_policy(
        _INVALID, job.run_policy.lifecycle, job.spec.jax_replica_specs or {}, _LIFECYCLE_RULES
    )
    specs = job.spec.jax_replica_specs or {}
    check_generated_names(_INVALID, KIND, job.name, specs.items())
