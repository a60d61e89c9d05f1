"""JAXJob as a job kind: everything the generic job controller needs to know about it.

Container ``jax``, port ``jaxjob-port`` (6666 by default), the pods' environment
(:mod:`.envvar`), the master role and the success rule (:mod:`.status`), as training-operator
v1.9 has them. Pods and services carry v1.9's ``training.kubeflow.org/*`` labels
(``operator-name: jaxjob-controller``) and, like every kind's here, labels of the kind's
own that select them (``group-name``, ``jax-job-name``, ``jax-replica-type``,
``jax-replica-index``, ``jax-job-role``; divergences D81, D131). v1.9 writes
``replicaStatuses[*].selector`` for a JAXJob (its CRD's scale subresource reads the Worker's);
so does this kind.
"""

from __future__ import annotations

from tf_operator.apis.jax.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    FRAMEWORK_NAME,
    GROUP_NAME,
    SPECS_FIELD,
)
from tf_operator.apis.jax.v1.defaults import set_defaults_jaxjob
from tf_operator.apis.jax.v1.types import JAXJob
from tf_operator.common.jobcontroller.kind import JobKind, LabelKeys, PodEnv
from tf_operator.controller.v1.jax.envvar import get_port, set_cluster_spec
from tf_operator.controller.v1.jax.informer import (
    JAXJOBS,
    decode_jaxjob,
    decode_validated_jaxjob,
)
from tf_operator.controller.v1.jax.status import is_master_role, jax_progress
from tf_operator.controller.v1.metrics import framework_metrics
from tf_operator.k8s.objects import Obj

# v1.9's controller name: its events' source and its pods' operator-name label.
CONTROLLER_NAME = "jaxjob-controller"
JAX_LABELS = LabelKeys(
    group_name="group-name",
    group_name_value=GROUP_NAME,
    job_name="jax-job-name",
    replica_type="jax-replica-type",
    replica_index="jax-replica-index",
    job_role="jax-job-role",
    operator_name=CONTROLLER_NAME,
)


def cluster_env(job: JAXJob) -> PodEnv:
    """The pods' environment of one job version."""

    def put(template: Obj, rt: str, index: int) -> None:
        set_cluster_spec(template, job, rt, index)

    return put


JAXJOB_KIND: JobKind[JAXJob] = JobKind(
    controller_name=CONTROLLER_NAME,
    resource=JAXJOBS,
    labels=JAX_LABELS,
    default_container_name=DEFAULT_CONTAINER_NAME,
    default_port_name=DEFAULT_PORT_NAME,
    metrics=framework_metrics(FRAMEWORK_NAME),
    decode=decode_jaxjob,
    decode_validated=decode_validated_jaxjob,
    replica_specs_field=SPECS_FIELD,
    set_defaults=set_defaults_jaxjob,
    is_master_role=is_master_role,
    port=get_port,
    cluster_env=cluster_env,
    progress=jax_progress,
    writes_replica_selector=True,
)
