"""A minimal PyTorchJob-like job kind, for tests only.

It proves the job controller's claim that a second kind is one new ``JobKind`` and no copied
reconcile logic: everything below is what a PyTorchJob contributes (its types, labels,
container and port, the ``MASTER_ADDR``/``WORLD_SIZE``/``RANK`` environment, and "the master
decides"); pods, services, PodGroups, status, clean-up and TTL come from
``tf_operator.common.jobcontroller`` unchanged.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from tf_operator.apis.common.v1.fields import DecodeError
from tf_operator.apis.common.v1.run_policy import (
    DEFAULTS_V0_5_3,
    SHARED_FIELDS,
    Defaults,
    NormalisedRunPolicy,
    RunPolicy,
    defaults_for,
    normalise_run_policy,
)
from tf_operator.apis.common.v1.types import JobStatus, ReplicaSpec, ReplicaStatus
from tf_operator.common.jobcontroller.kind import (
    InvalidJobError,
    Job,
    JobKind,
    JobMetrics,
    LabelKeys,
    Progress,
)
from tf_operator.common.jobcontroller.util import gen_general_name
from tf_operator.k8s.client import Resource
from tf_operator.metrics import LegacyCounter

PYTORCHJOBS = Resource("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob")
MASTER, WORKER = "Master", "Worker"
CONTAINER, PORT_NAME, DEFAULT_PORT = "pytorch", "pytorchjob-port", 23456


@dataclass
class PyTorchJobSpec:
    replica_specs: dict[str, ReplicaSpec]


@dataclass
class PyTorchJob:
    metadata: dict[str, Any]
    spec: PyTorchJobSpec
    run_policy: NormalisedRunPolicy
    status: JobStatus = field(default_factory=JobStatus)
    raw: dict[str, Any] = field(default_factory=dict)

    name = property(lambda self: str(self.metadata.get("name", "")))
    namespace = property(lambda self: str(self.metadata.get("namespace", "")))
    uid = property(lambda self: str(self.metadata.get("uid", "")))
    deletion_timestamp = property(lambda self: self.metadata.get("deletionTimestamp"))

    def replica_specs(self) -> dict[str, ReplicaSpec]:
        order = [t for t in (MASTER, WORKER) if t in self.spec.replica_specs]
        return {t: self.spec.replica_specs[t] for t in order}

    def to_dict(self) -> dict[str, Any]:
        out = copy.deepcopy(self.raw)
        out["metadata"] = copy.deepcopy(self.metadata)
        out["status"] = self.status.to_dict()
        return out

    def object_ref(self) -> dict[str, Any]:
        meta = {k: self.metadata[k] for k in ("name", "namespace", "uid") if k in self.metadata}
        return {"apiVersion": PYTORCHJOBS.api_version, "kind": PYTORCHJOBS.kind, "metadata": meta}


def decode(raw: dict[str, Any], defaults: Defaults = DEFAULTS_V0_5_3) -> PyTorchJob:
    try:
        spec = raw.get("spec") or {}
        specs = spec.get("pytorchReplicaSpecs")
        if not isinstance(specs, dict) or MASTER not in specs:
            raise InvalidJobError("PyTorchJobSpec is not valid: a Master replica is required")
        replica_specs = {t: ReplicaSpec.from_dict(s, f"spec.{t}") for t, s in specs.items()}
        metadata = copy.deepcopy(raw.get("metadata") or {})
        nested = spec.get("runPolicy")
        run_policy = normalise_run_policy(
            None if nested is None else RunPolicy.from_dict(nested, "spec.runPolicy"),
            RunPolicy.from_dict({k: spec.get(k) for k, _ in SHARED_FIELDS}, "spec"),
            defaults_for(metadata, defaults),
        )
        return PyTorchJob(
            metadata=metadata,
            spec=PyTorchJobSpec(replica_specs),
            run_policy=run_policy,
            status=JobStatus.from_dict(raw.get("status")),
            raw=copy.deepcopy(raw),
        )
    except DecodeError as err:
        raise InvalidJobError(str(err)) from err


def _pytorch(job: Job) -> PyTorchJob:
    assert isinstance(job, PyTorchJob)
    return job


def set_defaults(job: Job) -> None:
    job = _pytorch(job)
    for spec in job.spec.replica_specs.values():
        spec.replicas = 1 if spec.replicas is None else spec.replicas
        spec.restart_policy = spec.restart_policy or "OnFailure"


def port(job: Job, rtype: str) -> int:
    for container in _pytorch(job).spec.replica_specs[rtype].containers():
        for p in container.get("ports") or []:
            if p.get("name") == PORT_NAME:
                return int(p["containerPort"])
    return DEFAULT_PORT


def set_cluster_spec(template: dict[str, Any], job: Job, rt: str, index: int) -> None:
    job = _pytorch(job)
    workers = job.spec.replica_specs.get(WORKER)
    world = 1 + ((workers.replicas or 0) if workers is not None else 0)
    rank = 0 if rt == "master" else index + 1
    env = [
        {"name": "MASTER_ADDR", "value": gen_general_name(job.name, "master", 0)},
        {"name": "MASTER_PORT", "value": str(port(job, MASTER))},
        {"name": "WORLD_SIZE", "value": str(world)},
        {"name": "RANK", "value": str(rank)},
    ]
    for container in (template.get("spec") or {}).get("containers") or []:
        container["env"] = [*(container.get("env") or []), *env]


def progress(
    job: Job, rtype: str, replicas: int, counts: ReplicaStatus, index0_completed: bool
) -> Progress:
    if rtype != MASTER:
        return Progress()
    return Progress(running=counts.active > 0, succeeded=counts.succeeded >= replicas)


def _counter(what: str) -> LegacyCounter:
    return LegacyCounter(f"pytorch_operator_jobs_{what}", what)


PYTORCH_KIND = JobKind(
    controller_name="pytorch-operator",
    resource=PYTORCHJOBS,
    labels=LabelKeys(
        group_name="group-name",
        group_name_value="kubeflow.org",
        job_name="pytorch-job-name",
        replica_type="pytorch-replica-type",
        replica_index="pytorch-replica-index",
        job_role="pytorch-job-role",
        operator_name="pytorchjob-controller",
    ),
    default_container_name=CONTAINER,
    default_port_name=PORT_NAME,
    metrics=JobMetrics(*(_counter(w) for w in ("created", "deleted", "ok", "failed", "restarted"))),
    decode=decode,
    replica_specs_field="pytorchReplicaSpecs",
    set_defaults=set_defaults,
    is_master_role=lambda job, rtype, index: rtype == MASTER,
    port=port,
    set_cluster_spec=set_cluster_spec,
    progress=progress,
    writes_replica_selector=True,  # as training-operator v1.9's PyTorchJob controller does
)
