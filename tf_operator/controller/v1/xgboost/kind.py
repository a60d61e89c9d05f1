"""XGBoostJob as a job kind: everything the generic job controller needs to know about it.

Container ``xgboost``, port ``xgboostjob-port`` (9999 by default), the pods' environment
(:mod:`.envvar`), the master role and the success rule (:mod:`.status`), as training-operator
v1.9 has them. Pods and services carry v1.9's ``training.kubeflow.org/*`` labels
(``operator-name: xgboostjob-controller``) and, like every kind's here, labels of the kind's
own that select them (``group-name``, ``xgboost-job-name``, ``xgboost-replica-type``,
``xgboost-replica-index``, ``xgboost-job-role``; divergences D81, D130). v1.9 writes no
``replicaStatuses[*].selector`` for an XGBoostJob (its CRD has no scale subresource); nor does
this kind.
"""

from __future__ import annotations

from tf_operator.apis.xgboost.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    FRAMEWORK_NAME,
    GROUP_NAME,
    SPECS_FIELD,
)
from tf_operator.apis.xgboost.v1.defaults import set_defaults_xgboostjob
from tf_operator.apis.xgboost.v1.types import XGBoostJob
from tf_operator.common.jobcontroller.kind import JobKind, LabelKeys, PodEnv
from tf_operator.controller.v1.metrics import framework_metrics
from tf_operator.controller.v1.xgboost.envvar import get_port, set_cluster_spec
from tf_operator.controller.v1.xgboost.informer import (
    XGBOOSTJOBS,
    decode_validated_xgboostjob,
    decode_xgboostjob,
)
from tf_operator.controller.v1.xgboost.status import is_master_role, xgboost_progress
from tf_operator.k8s.objects import Obj

# v1.9's controller name: its events' source and its pods' operator-name label.
CONTROLLER_NAME = "xgboostjob-controller"
XGBOOST_LABELS = LabelKeys(
    group_name="group-name",
    group_name_value=GROUP_NAME,
    job_name="xgboost-job-name",
    replica_type="xgboost-replica-type",
    replica_index="xgboost-replica-index",
    job_role="xgboost-job-role",
    operator_name=CONTROLLER_NAME,
)


def cluster_env(job: XGBoostJob) -> PodEnv:
    """The pods' environment of one job version."""

    def put(template: Obj, rt: str, index: int) -> None:
        set_cluster_spec(template, job, rt, index)

    return put


XGBOOSTJOB_KIND: JobKind[XGBoostJob] = JobKind(
    controller_name=CONTROLLER_NAME,
    resource=XGBOOSTJOBS,
    labels=XGBOOST_LABELS,
    default_container_name=DEFAULT_CONTAINER_NAME,
    default_port_name=DEFAULT_PORT_NAME,
    metrics=framework_metrics(FRAMEWORK_NAME),
    decode=decode_xgboostjob,
    decode_validated=decode_validated_xgboostjob,
    replica_specs_field=SPECS_FIELD,
    set_defaults=set_defaults_xgboostjob,
    is_master_role=is_master_role,
    port=get_port,
    cluster_env=cluster_env,
    progress=xgboost_progress,
)
