"""PyTorchJob as a job kind: everything the generic job controller needs to know about it.

Container ``pytorch``, port ``pytorchjob-port`` (23456 by default), the pods' environment
(:mod:`.envvar`), the master role and the success rule (:mod:`.status`), as training-operator
v1.9 has them. Pods and services carry v1.9's ``training.kubeflow.org/*`` labels
(``operator-name: pytorchjob-controller``); like a TFJob's, they are selected by labels of
the kind's own (``group-name``, ``pytorch-job-name``, ``pytorch-replica-type``,
``pytorch-replica-index``, ``pytorch-job-role``), which the informers keep (divergence D81).
v1.9 writes ``status.replicaStatuses[*].selector`` for a PyTorchJob (its CRD's scale
subresource reads the Worker's); so does this kind.
"""

from __future__ import annotations

from tf_operator.apis.pytorch.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    FRAMEWORK_NAME,
    GROUP_NAME,
)
from tf_operator.apis.pytorch.v1.defaults import set_defaults_pytorchjob
from tf_operator.apis.pytorch.v1.types import PyTorchJob
from tf_operator.common.jobcontroller.kind import JobKind, LabelKeys, PodEnv
from tf_operator.controller.v1.metrics import framework_metrics
from tf_operator.controller.v1.pytorch.envvar import get_port, set_cluster_spec
from tf_operator.controller.v1.pytorch.informer import (
    PYTORCHJOBS,
    decode_pytorchjob,
    decode_validated_pytorchjob,
)
from tf_operator.controller.v1.pytorch.status import is_master_role, pytorch_progress
from tf_operator.k8s.objects import Obj

# v1.9's controller name: its events' source and its pods' operator-name label.
CONTROLLER_NAME = "pytorchjob-controller"
PYTORCH_LABELS = LabelKeys(
    group_name="group-name",
    group_name_value=GROUP_NAME,
    job_name="pytorch-job-name",
    replica_type="pytorch-replica-type",
    replica_index="pytorch-replica-index",
    job_role="pytorch-job-role",
    operator_name=CONTROLLER_NAME,
)


def cluster_env(job: PyTorchJob) -> PodEnv:
    """The pods' environment of one job version (nothing in it is shared between pods)."""

    def put(template: Obj, rt: str, index: int) -> None:
        set_cluster_spec(template, job, rt, index)

    return put


PYTORCHJOB_KIND: JobKind[PyTorchJob] = JobKind(
    controller_name=CONTROLLER_NAME,
    resource=PYTORCHJOBS,
    labels=PYTORCH_LABELS,
    default_container_name=DEFAULT_CONTAINER_NAME,
    default_port_name=DEFAULT_PORT_NAME,
    metrics=framework_metrics(FRAMEWORK_NAME),
    decode=decode_pytorchjob,
    decode_validated=decode_validated_pytorchjob,
    replica_specs_field="pytorchReplicaSpecs",
    set_defaults=set_defaults_pytorchjob,
    is_master_role=is_master_role,
    port=get_port,
    cluster_env=cluster_env,
    progress=pytorch_progress,
    writes_replica_selector=True,
)
