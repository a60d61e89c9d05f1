"""TFJob as a job kind: everything the generic job controller needs to know about it.

Labels, container and port names are v0.5.3's; the master role goes to the Chief/Master when
the job has one, else to worker 0; the cluster environment is ``TF_CONFIG``
(:mod:`.tensorflow`); the success rule is in :mod:`.status`.
"""

from __future__ import annotations

from tf_operator.apis.tensorflow.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    FRAMEWORK_NAME,
    GROUP_NAME,
)
from tf_operator.apis.tensorflow.v1.defaults import set_defaults_tfjob
from tf_operator.apis.tensorflow.v1.types import (
    TFJob,
    contains_chief_or_master_spec,
    is_chief_or_master,
    is_worker,
)
from tf_operator.common.jobcontroller.kind import JobKind, LabelKeys
from tf_operator.controller.v1.metrics import framework_metrics
from tf_operator.controller.v1.tensorflow import metrics
from tf_operator.controller.v1.tensorflow.informer import (
    TFJOBS,
    decode_tfjob,
    decode_validated_tfjob,
)
from tf_operator.controller.v1.tensorflow.status import tf_progress
from tf_operator.controller.v1.tensorflow.tensorflow import TFConfig, get_port_from_tfjob

CONTROLLER_NAME = "tf-operator"
TF_LABELS = LabelKeys(
    group_name="group-name",
    group_name_value=GROUP_NAME,
    job_name="tf-job-name",
    replica_type="tf-replica-type",
    replica_index="tf-replica-index",
    job_role="tf-job-role",
    operator_name="tfjob-controller",  # training-operator v1.9's TFJob controller
)
# v0.5.3's tf_operator_jobs_* and v1.9's training_operator_jobs_*_total{framework="tensorflow"}
TF_METRICS = framework_metrics(FRAMEWORK_NAME, metrics.ALL_COUNTERS)


def is_master_role(job: TFJob, rtype: str, index: int) -> bool:
    if contains_chief_or_master_spec(job):
        return is_chief_or_master(rtype)
    return is_worker(rtype) and index == 0


TFJOB_KIND: JobKind[TFJob] = JobKind(
    controller_name=CONTROLLER_NAME,
    resource=TFJOBS,
    labels=TF_LABELS,
    default_container_name=DEFAULT_CONTAINER_NAME,
    default_port_name=DEFAULT_PORT_NAME,
    metrics=TF_METRICS,
    decode=decode_tfjob,
    decode_validated=decode_validated_tfjob,
    replica_specs_field="tfReplicaSpecs",
    set_defaults=set_defaults_tfjob,
    is_master_role=is_master_role,
    port=get_port_from_tfjob,
    cluster_env=lambda job: TFConfig(job).apply,
    progress=tf_progress,
)
