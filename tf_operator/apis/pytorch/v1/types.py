"""The PyTorchJob resource (``kubeflow.org/v1``) as dataclasses that round-trip its JSON.

The fields are training-operator v1.9's: ``spec.runPolicy`` (the run policy every kind shares,
normalised once per decode, D55), ``spec.elasticPolicy`` (torchrun's elastic rendezvous),
``spec.pytorchReplicaSpecs`` (``Master`` and ``Worker``) and ``spec.nprocPerNode``; the status
is the common ``JobStatus``. ``from_dict`` decodes an object as the API server returns it and
``to_dict`` gives it back with every field we did not model untouched. Malformed input raises
:class:`DecodeError` with the JSON path of the offending field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tf_operator.apis.common.v1.fields import (
    DecodeError,
    expect_dict,
    opt_bool,
    opt_int,
    opt_str,
    put_present,
    rest,
)
from tf_operator.apis.common.v1.job import JobObject, decode_envelope
from tf_operator.apis.common.v1.lifecycle import policy_in_force
from tf_operator.apis.common.v1.run_policy import (
    DEFAULTS_V1_9,
    Defaults,
    NormalisedRunPolicy,
    RunPolicy,
    defaults_for,
    normalise_run_policy,
)
from tf_operator.apis.common.v1.types import (
    JobStatus,
    ReplicaSpec,
    decode_replica_specs,
    encode_replica_specs,
    in_kind_order,
)
from tf_operator.apis.pytorch.v1.constants import (
    API_VERSION,
    KIND,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_ORDER,
    REPLICA_TYPE_WORKER,
)
from tf_operator.k8s.objects import json_copy


@dataclass
class RDZVConf:
    """One ``elasticPolicy.rdzvConf`` entry: a rendezvous option ``key=value``."""

    key: str = ""
    value: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("key", "value")

    @classmethod
    def from_dict(cls, data: Any, path: str) -> RDZVConf:
        data = expect_dict(data, path, allow_none=False) or {}
        return cls(
            key=opt_str(data, "key", path) or "",
            value=opt_str(data, "value", path) or "",
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        put_present(out, (("key", self.key or None), ("value", self.value or None)))
        out.update(json_copy(self.extra))
        return out


@dataclass
class ElasticPolicy:
    """``spec.elasticPolicy``: torchrun's elastic launch (its rendezvous, the node range)."""

    min_replicas: int | None = None
    max_replicas: int | None = None
    rdzv_backend: str | None = None
    rdzv_port: int | None = None
    rdzv_host: str | None = None
    rdzv_id: str | None = None
    rdzv_conf: list[RDZVConf] | None = None
    standalone: bool | None = None
    n_proc_per_node: int | None = None  # deprecated by v1.7 for spec.nprocPerNode
    max_restarts: int | None = None
    # autoscaling/v2 MetricSpecs for the HPA v1.9 creates from them (kept as written)
    metrics: list[Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = (
        "minReplicas",
        "maxReplicas",
        "rdzvBackend",
        "rdzvPort",
        "rdzvHost",
        "rdzvId",
        "rdzvConf",
        "standalone",
        "nProcPerNode",
        "maxRestarts",
        "metrics",
    )

    @classmethod
    def from_dict(cls, data: Any, path: str) -> ElasticPolicy:
        data = expect_dict(data, path) or {}
        conf = data.get("rdzvConf")
        if conf is not None and not isinstance(conf, list):
            raise DecodeError(f"{path}.rdzvConf: expected a list")
        metrics = data.get("metrics")
        if metrics is not None and not isinstance(metrics, list):
            raise DecodeError(f"{path}.metrics: expected a list")
        return cls(
            min_replicas=opt_int(data, "minReplicas", path),
            max_replicas=opt_int(data, "maxReplicas", path),
            rdzv_backend=opt_str(data, "rdzvBackend", path),
            rdzv_port=opt_int(data, "rdzvPort", path),
            rdzv_host=opt_str(data, "rdzvHost", path),
            rdzv_id=opt_str(data, "rdzvId", path),
            rdzv_conf=None
            if conf is None
            else [RDZVConf.from_dict(c, f"{path}.rdzvConf[{i}]") for i, c in enumerate(conf)],
            standalone=opt_bool(data, "standalone", path),
            n_proc_per_node=opt_int(data, "nProcPerNode", path),
            max_restarts=opt_int(data, "maxRestarts", path),
            metrics=None if metrics is None else json_copy(metrics),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        put_present(
            out,
            (
                ("minReplicas", self.min_replicas),
                ("maxReplicas", self.max_replicas),
                ("rdzvBackend", self.rdzv_backend),
                ("rdzvPort", self.rdzv_port),
                ("rdzvHost", self.rdzv_host),
                ("rdzvId", self.rdzv_id),
                (
                    "rdzvConf",
                    None if self.rdzv_conf is None else [c.to_dict() for c in self.rdzv_conf],
                ),
                ("standalone", self.standalone),
                ("nProcPerNode", self.n_proc_per_node),
                ("maxRestarts", self.max_restarts),
                ("metrics", json_copy(self.metrics)),
            ),
        )
        out.update(json_copy(self.extra))
        return out


@dataclass
class PyTorchJobSpec:
    """``spec`` of a PyTorchJob; ``pytorch_replica_specs`` is ``None`` when absent or null."""

    pytorch_replica_specs: dict[str, ReplicaSpec | None] | None = None
    run_policy: RunPolicy | None = None
    elastic_policy: ElasticPolicy | None = None
    nproc_per_node: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("pytorchReplicaSpecs", "runPolicy", "elasticPolicy", "nprocPerNode")

    @classmethod
    def from_dict(cls, data: Any, path: str = "spec") -> PyTorchJobSpec:
        data = expect_dict(data, path) or {}
        run_policy, elastic = data.get("runPolicy"), data.get("elasticPolicy")
        return cls(
            pytorch_replica_specs=decode_replica_specs(data, "pytorchReplicaSpecs", path),
            run_policy=None
            if run_policy is None
            else RunPolicy.from_dict(run_policy, f"{path}.runPolicy"),
            elastic_policy=None
            if elastic is None
            else ElasticPolicy.from_dict(elastic, f"{path}.elasticPolicy"),
            nproc_per_node=opt_str(data, "nprocPerNode", path),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        put_present(
            out,
            (
                ("runPolicy", None if self.run_policy is None else self.run_policy.to_dict()),
                (
                    "elasticPolicy",
                    None if self.elastic_policy is None else self.elastic_policy.to_dict(),
                ),
            ),
        )
        out["pytorchReplicaSpecs"] = encode_replica_specs(self.pytorch_replica_specs)
        put_present(out, (("nprocPerNode", self.nproc_per_node),))
        out.update(json_copy(self.extra))
        return out


@dataclass
class PyTorchJob(JobObject):
    """A PyTorchJob: metadata (dict[str, Any]), spec and status, plus any unknown top-level keys."""

    metadata: dict[str, Any] = field(default_factory=dict)
    spec: PyTorchJobSpec = field(default_factory=PyTorchJobSpec)
    status: JobStatus = field(default_factory=JobStatus)
    api_version: str = API_VERSION
    kind: str = KIND
    extra: dict[str, Any] = field(default_factory=dict)
    # Derived, never written: what the controller obeys (defaults applied).
    run_policy: NormalisedRunPolicy = field(default_factory=NormalisedRunPolicy)

    @classmethod
    def from_dict(cls, data: Any, defaults: Defaults = DEFAULTS_V1_9) -> PyTorchJob:
        """Decode a PyTorchJob; raises :class:`DecodeError` if a modelled field has the wrong
        type. Its run policy gets ``defaults`` (v1.9's: a PyTorchJob has no v0.5.3 past)
        unless the job's ``tf-operator.kubeflow.org/defaults`` annotation names others."""
        job = decode_envelope(data, KIND, API_VERSION, PyTorchJobSpec.from_dict)
        return cls(
            metadata=job.metadata,
            spec=job.spec,
            run_policy=normalise_run_policy(
                job.spec.run_policy,
                RunPolicy(),
                defaults_for(job.metadata, defaults),
                lifecycle=policy_in_force(job.spec.extra, job.status.extra),
            ),
            status=job.status,
            api_version=job.api_version,
            kind=job.kind,
            extra=job.extra,
        )

    # -- replica-type helpers --

    def replica_specs(self) -> dict[str, ReplicaSpec]:
        """Replica type → spec, Master first, null specs left out."""
        specs = self.spec.pytorch_replica_specs or {}
        order = in_kind_order(specs, REPLICA_TYPE_ORDER)
        return {t: s for t in order if (s := specs[t]) is not None}

    def has_master(self) -> bool:
        return (self.spec.pytorch_replica_specs or {}).get(REPLICA_TYPE_MASTER) is not None

    def worker_spec(self) -> ReplicaSpec | None:
        return (self.spec.pytorch_replica_specs or {}).get(REPLICA_TYPE_WORKER)


__all__ = ["DecodeError", "ElasticPolicy", "PyTorchJob", "PyTorchJobSpec", "RDZVConf"]
