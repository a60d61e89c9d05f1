"""What a job kind contributes to the generic job controller, and the job it works on.

As kubeflow/common later split its job controller from TFJob through a ``ControllerInterface``,
one :class:`JobKind` holds a kind's specifics: resource, labels, default container and port,
decoding and defaults, the master role, the pods' cluster environment (``TF_CONFIG``), and the
rule turning a replica type's counts into Running or Succeeded. Everything else is shared; a
second kind is one new :class:`JobKind` (PyTorchJob beside TFJob). :class:`Job` is what the
reconcilers read of any decoded job; a :class:`JobKind` is generic over its own job class
``J``, so its functions take that class (a TFJob's take a ``TFJob``) and the reconcilers that
call them are generic over ``J`` too: no kind downcasts what the controller hands it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from tf_operator.apis.common.v1.run_policy import Defaults, NormalisedRunPolicy
from tf_operator.apis.common.v1.types import (
    JOB_NAME_LABEL,
    JOB_ROLE_LABEL,
    OPERATOR_NAME_LABEL,
    REPLICA_INDEX_LABEL,
    REPLICA_TYPE_LABEL,
    JobStatus,
    ReplicaSpec,
    ReplicaStatus,
)
from tf_operator.k8s.client import Resource
from tf_operator.k8s.objects import Obj

# Put the cluster environment of pod ``index`` of replica type ``rt`` into a pod template.
PodEnv = Callable[[Obj, str, int], None]


class InvalidJobError(ValueError):
    """A cached object does not decode or validate as the kind; the text says why."""


class Job(Protocol):
    """A decoded job of any kind, as the reconcilers see it.

    ``run_policy`` is the only run policy the reconcilers read: the kind's decode builds it
    once from ``spec.runPolicy`` and v0.5.3's top-level fields
    (:func:`~tf_operator.apis.common.v1.run_policy.normalise_run_policy`).
    """

    metadata: dict[str, Any]
    status: JobStatus

    @property
    def run_policy(self) -> NormalisedRunPolicy: ...

    @property
    def name(self) -> str: ...

    @property
    def namespace(self) -> str: ...

    @property
    def uid(self) -> str: ...

    @property
    def deletion_timestamp(self) -> str:
        """Empty unless the job is being deleted."""
        ...

    def replica_specs(self) -> dict[str, ReplicaSpec]:
        """Replica type → spec, in the kind's fixed order (null specs left out)."""
        ...

    def to_dict(self) -> Obj: ...

    def object_ref(self) -> Obj:
        """What an event's involvedObject needs."""
        ...


J = TypeVar("J", bound=Job)


@dataclass(frozen=True)
class LabelKeys:
    """The kind's own label keys (and the group label's value) put on every pod and service of
    a job; they select the job's objects. The ``training.kubeflow.org/*`` labels of
    training-operator v1.9 go beside them, ``operator_name`` the value of its operator-name."""

    group_name: str
    group_name_value: str
    job_name: str
    replica_type: str
    replica_index: str
    job_role: str
    operator_name: str  # e.g. "tfjob-controller", v1.9's controller name


@dataclass(frozen=True)
class Progress:
    """What one replica type says about the whole job in this pass."""

    running: bool = False
    succeeded: bool = False
    # its failed pods do not fail the job (v1.9's enableDynamicWorker for TFJob workers)
    failures_tolerated: bool = False


class Counter(Protocol):
    def inc(self, amount: float = 1.0) -> None: ...


@dataclass(frozen=True)
class JobMetrics:
    """The kind's job counters (v0.5.3: ``tf_operator_jobs_*``); counted on transitions."""

    created: Counter
    deleted: Counter
    successful: Counter
    failed: Counter
    restarted: Counter


@dataclass(frozen=True)
class JobKind(Generic[J]):
    """Everything kind-specific the generic controller needs (see the module docstring)."""

    controller_name: str  # e.g. "tf-operator"
    resource: Resource  # the job resource (group, version, plural, kind)
    labels: LabelKeys
    default_container_name: str  # the container whose exit code decides ("tensorflow")
    default_port_name: str  # the port the replicas' services expose ("tfjob-port")
    metrics: JobMetrics
    # Decode and validate a cached object with the operator's defaults (the job's annotation
    # may pick others); raise InvalidJobError.
    decode: Callable[[Obj, Defaults], J]
    # ``decode`` without the validation, for a job whose name and spec were found valid.
    decode_validated: Callable[[Obj, Defaults], J]
    # The spec field holding the replica specs by type ("tfReplicaSpecs").
    replica_specs_field: str
    set_defaults: Callable[[J], None]
    # Whether pod ``index`` of a replica type gets the ``job-role: master`` label.
    is_master_role: Callable[[J, str, int], bool]
    # The container port of a replica type's default port (its service's port).
    port: Callable[[J, str], int]
    # For one version of a job, what gives pod ``index`` of replica type ``rt`` (lower case)
    # its cluster environment: made once per pass, so what all the job's pods share (the
    # cluster part of TF_CONFIG) is built once for the pods the pass creates.
    cluster_env: Callable[[J], PodEnv]
    # Running/Succeeded as decided by one replica type from its counts and whether its pod 0
    # completed (every type's failures fail the job; see status.py).
    progress: Callable[[J, str, int, ReplicaStatus, bool], Progress]
    # Whether status.replicaStatuses[*].selector names each type's pods, as training-operator
    # v1.9 writes it for PyTorchJob (for a scale subresource) but not for TFJob.
    writes_replica_selector: bool = False


def owner_reference(kind: JobKind[J], job: J) -> Obj:
    """The controller reference every object created for ``job`` carries."""
    return {
        "apiVersion": kind.resource.api_version,
        "kind": kind.resource.kind,
        "name": job.name,
        "uid": job.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def job_labels(kind: JobKind[J], job_name: str) -> dict[str, str]:
    """The two labels every pod and service of a job carries (its selector)."""
    return {
        kind.labels.group_name: kind.labels.group_name_value,
        kind.labels.job_name: job_name.replace("/", "-"),
    }


def replica_selector(kind: JobKind[J], job_name: str, rt: str, index: int) -> dict[str, str]:
    """The job's labels plus replica type (lower case) and index: what a replica's service
    selects its pod by (v0.5.3's labels)."""
    labels = job_labels(kind, job_name)
    labels[kind.labels.replica_type] = rt
    labels[kind.labels.replica_index] = str(index)
    return labels


def replica_type_selector(kind: JobKind[J], job_name: str, rt: str) -> str:
    """The pods of one replica type as a label selector in text, as v1.9 writes it
    (``metav1.FormatLabelSelector`` of its operator-name, job-name and replica-type labels)."""
    labels = {
        OPERATOR_NAME_LABEL: kind.labels.operator_name,
        JOB_NAME_LABEL: job_name.replace("/", "-"),
        REPLICA_TYPE_LABEL: rt,
    }
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def replica_labels(
    kind: JobKind[J], job_name: str, rt: str, index: int, master_role: bool = False
) -> dict[str, str]:
    """Every label of a replica's pod and service: v0.5.3's (:func:`replica_selector`, and the
    job-role of a master's pod) and training-operator v1.9's ``training.kubeflow.org/*``."""
    labels = replica_selector(kind, job_name, rt, index)
    labels[OPERATOR_NAME_LABEL] = kind.labels.operator_name
    labels[JOB_NAME_LABEL] = job_name.replace("/", "-")
    labels[REPLICA_TYPE_LABEL] = rt
    labels[REPLICA_INDEX_LABEL] = str(index)
    if master_role:
        labels[kind.labels.job_role] = labels[JOB_ROLE_LABEL] = "master"
    return labels
