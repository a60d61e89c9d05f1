"""The job kinds the SDK speaks: what a client needs to know of each (its resource and the
versions served, the labels its pods carry, its default container, its replica types).

One client class serves every kind (:class:`~tf_operator.sdk.client.JobClient`); a
:class:`JobKindInfo` is what differs. The labels are the ones the operator selects a kind's
pods by (v0.5.3's for a TFJob, the same pattern for the other kinds), which is also what kubectl
users select on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tf_operator.apis.jax.v1 import constants as jax
from tf_operator.apis.paddle.v1 import constants as paddle
from tf_operator.apis.pytorch.v1 import constants as pytorch
from tf_operator.apis.tensorflow.v1 import constants as tensorflow
from tf_operator.apis.xgboost.v1 import constants as xgboost
from tf_operator.k8s.client import Resource


@dataclass(frozen=True)
class JobKindInfo:
    """One job kind as the SDK sees it."""

    kind: str  # "TFJob"
    plural: str  # "tfjobs"
    group: str
    versions: tuple[str, ...]  # served, the storage version first
    container: str  # the default container (its log is the replica's log)
    replica_types: tuple[str, ...]  # in the operator's order
    specs_field: str  # "tfReplicaSpecs"
    job_name_label: str
    replica_type_label: str  # the replica type in lower case
    replica_index_label: str
    group_name_label: str = "group-name"

    @property
    def resource(self) -> Resource:
        return Resource(self.group, self.versions[0], self.plural, self.kind)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.versions[0]}"

    @property
    def noun(self) -> str:
        """How kubectl names the resource in its messages (``tfjob.kubeflow.org``)."""
        return f"{self.kind.lower()}.{self.group}"

    def at_version(self, version: str) -> Resource:
        return Resource(self.group, version, self.plural, self.kind)


TFJOB = JobKindInfo(
    kind=tensorflow.KIND,
    plural=tensorflow.PLURAL,
    group=tensorflow.GROUP_NAME,
    versions=tensorflow.SERVED_VERSIONS,
    container=tensorflow.DEFAULT_CONTAINER_NAME,
    replica_types=tensorflow.REPLICA_TYPE_ORDER,
    specs_field="tfReplicaSpecs",
    job_name_label="tf-job-name",
    replica_type_label="tf-replica-type",
    replica_index_label="tf-replica-index",
)
PYTORCHJOB = JobKindInfo(
    kind=pytorch.KIND,
    plural=pytorch.PLURAL,
    group=pytorch.GROUP_NAME,
    versions=(pytorch.GROUP_VERSION,),
    container=pytorch.DEFAULT_CONTAINER_NAME,
    replica_types=pytorch.REPLICA_TYPE_ORDER,
    specs_field="pytorchReplicaSpecs",
    job_name_label="pytorch-job-name",
    replica_type_label="pytorch-replica-type",
    replica_index_label="pytorch-replica-index",
)
XGBOOSTJOB = JobKindInfo(
    kind=xgboost.KIND,
    plural=xgboost.PLURAL,
    group=xgboost.GROUP_NAME,
    versions=(xgboost.GROUP_VERSION,),
    container=xgboost.DEFAULT_CONTAINER_NAME,
    replica_types=xgboost.REPLICA_TYPE_ORDER,
    specs_field=xgboost.SPECS_FIELD,
    job_name_label="xgboost-job-name",
    replica_type_label="xgboost-replica-type",
    replica_index_label="xgboost-replica-index",
)
JAXJOB = JobKindInfo(
    kind=jax.KIND,
    plural=jax.PLURAL,
    group=jax.GROUP_NAME,
    versions=(jax.GROUP_VERSION,),
    container=jax.DEFAULT_CONTAINER_NAME,
    replica_types=jax.REPLICA_TYPE_ORDER,
    specs_field=jax.SPECS_FIELD,
    job_name_label="jax-job-name",
    replica_type_label="jax-replica-type",
    replica_index_label="jax-replica-index",
)
PADDLEJOB = JobKindInfo(
    kind=paddle.KIND,
    plural=paddle.PLURAL,
    group=paddle.GROUP_NAME,
    versions=(paddle.GROUP_VERSION,),
    container=paddle.DEFAULT_CONTAINER_NAME,
    replica_types=paddle.REPLICA_TYPE_ORDER,
    specs_field=paddle.SPECS_FIELD,
    job_name_label="paddle-job-name",
    replica_type_label="paddle-replica-type",
    replica_index_label="paddle-replica-index",
)
KINDS = {k.kind: k for k in (TFJOB, PYTORCHJOB, XGBOOSTJOB, JAXJOB, PADDLEJOB)}


def kind_of(job_kind: str | None) -> JobKindInfo:
    """The kind a job dict names (TFJob when it names none the SDK knows)."""
    return KINDS.get(job_kind or "", TFJOB)


def replica_specs(job: Mapping[str, Any]) -> dict[str, Any]:
    """The job's replica specs by type (``tfReplicaSpecs``, ``pytorchReplicaSpecs``...: the
    field of the kind it names), empty when unset."""
    specs = (job.get("spec") or {}).get(kind_of(job.get("kind")).specs_field)
    return specs if isinstance(specs, dict) else {}
