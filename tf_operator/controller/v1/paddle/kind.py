"""PaddleJob as a job kind: everything the generic job controller needs to know about it.

Container ``paddle``, port ``master`` (36543 by default), the pods' environment
(:mod:`.envvar`), the master role and the success rule (:mod:`.status`), as training-operator
v1.9 has them. Pods and services carry v1.9's ``training.kubeflow.org/*`` labels
(``operator-name: paddlejob-controller``) and, like every kind's here, labels of the kind's
own that select them (``group-name``, ``paddle-job-name``, ``paddle-replica-type``,
``paddle-replica-index``, ``paddle-job-role``; divergences D81, D132). v1.9 writes
``replicaStatuses[*].selector`` for a PaddleJob (its CRD's scale subresource reads the
Worker's); so does this kind.
"""

from __future__ import annotations

from tf_operator.apis.paddle.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    FRAMEWORK_NAME,
    GROUP_NAME,
    SPECS_FIELD,
)
from tf_operator.apis.paddle.v1.defaults import set_defaults_paddlejob
from tf_operator.apis.paddle.v1.types import PaddleJob
from tf_operator.common.jobcontroller.kind import JobKind, LabelKeys, PodEnv
from tf_operator.controller.v1.metrics import framework_metrics
from tf_operator.controller.v1.paddle.envvar import get_port, set_cluster_spec
from tf_operator.controller.v1.paddle.informer import (
    PADDLEJOBS,
    decode_paddlejob,
    decode_validated_paddlejob,
)
from tf_operator.controller.v1.paddle.status import is_master_role, paddle_progress
from tf_operator.k8s.objects import Obj

# v1.9's controller name: its events' source and its pods' operator-name label.
CONTROLLER_NAME = "paddlejob-controller"
PADDLE_LABELS = LabelKeys(
    group_name="group-name",
    group_name_value=GROUP_NAME,
    job_name="paddle-job-name",
    replica_type="paddle-replica-type",
    replica_index="paddle-replica-index",
    job_role="paddle-job-role",
    operator_name=CONTROLLER_NAME,
)


def cluster_env(job: PaddleJob) -> PodEnv:
    """The pods' environment of one job version."""

    def put(template: Obj, rt: str, index: int) -> None:
        set_cluster_spec(template, job, rt, index)

    return put


PADDLEJOB_KIND: JobKind[PaddleJob] = JobKind(
    controller_name=CONTROLLER_NAME,
    resource=PADDLEJOBS,
    labels=PADDLE_LABELS,
    default_container_name=DEFAULT_CONTAINER_NAME,
    default_port_name=DEFAULT_PORT_NAME,
    metrics=framework_metrics(FRAMEWORK_NAME),
    decode=decode_paddlejob,
    decode_validated=decode_validated_paddlejob,
    replica_specs_field=SPECS_FIELD,
    set_defaults=set_defaults_paddlejob,
    is_master_role=is_master_role,
    port=get_port,
    cluster_env=cluster_env,
    progress=paddle_progress,
    writes_replica_selector=True,
)
