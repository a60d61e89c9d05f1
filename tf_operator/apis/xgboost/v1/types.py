"""The XGBoostJob resource (``kubeflow.org/v1``) as dataclasses that round-trip its JSON.

training-operator v1.9's fields: ``spec.runPolicy`` (the run policy every kind shares,
normalised once per decode, D55) and ``spec.xgbReplicaSpecs`` (``Master`` and ``Worker``); the
status is the common ``JobStatus``. The lifecycle policy in force (``spec.lifecyclePolicy``, kept
in ``status.lifecyclePolicy``: D100, D110) goes into the normalised run policy. ``from_dict`` decodes an object as the API server returns
it and ``to_dict`` gives it back with every field we did not model untouched. Malformed input
raises :class:`DecodeError` with the JSON path of the offending field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tf_operator.apis.common.v1.fields import DecodeError, expect_dict, put_present, rest
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
from tf_operator.apis.xgboost.v1.constants import (
    API_VERSION,
    KIND,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_ORDER,
    REPLICA_TYPE_WORKER,
    SPECS_FIELD,
)
from tf_operator.k8s.objects import json_copy


@dataclass
class XGBoostJobSpec:
    """``spec`` of an XGBoostJob; ``xgb_replica_specs`` is ``None`` when absent or null."""

    xgb_replica_specs: dict[str, ReplicaSpec | None] | None = None
    run_policy: RunPolicy | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = (SPECS_FIELD, "runPolicy")

    @classmethod
    def from_dict(cls, data: Any, path: str = "spec") -> XGBoostJobSpec:
        data = expect_dict(data, path) or {}
        run_policy = data.get("runPolicy")
        return cls(
            xgb_replica_specs=decode_replica_specs(data, SPECS_FIELD, path),
            run_policy=None
            if run_policy is None
            else RunPolicy.from_dict(run_policy, f"{path}.runPolicy"),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        put_present(
            out, (("runPolicy", None if self.run_policy is None else self.run_policy.to_dict()),)
        )
        out[SPECS_FIELD] = encode_replica_specs(self.xgb_replica_specs)
        out.update(json_copy(self.extra))
        return out


@dataclass
class XGBoostJob(JobObject):
    """An XGBoostJob: metadata, spec and status, plus any unknown top-level keys."""

    metadata: dict[str, Any] = field(default_factory=dict)
    spec: XGBoostJobSpec = field(default_factory=XGBoostJobSpec)
    status: JobStatus = field(default_factory=JobStatus)
    api_version: str = API_VERSION
    kind: str = KIND
    extra: dict[str, Any] = field(default_factory=dict)
    # Derived, never written: what the controller obeys (defaults applied).
    run_policy: NormalisedRunPolicy = field(default_factory=NormalisedRunPolicy)

    @classmethod
    def from_dict(cls, data: Any, defaults: Defaults = DEFAULTS_V1_9) -> XGBoostJob:
        """Decode an XGBoostJob; raises :class:`DecodeError` if a modelled field has the wrong
        type. Its run policy gets v1.9's defaults unless the job's
        ``tf-operator.kubeflow.org/defaults`` annotation names others."""
        job = decode_envelope(data, KIND, API_VERSION, XGBoostJobSpec.from_dict)
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

    def replica_specs(self) -> dict[str, ReplicaSpec]:
        """Replica type → spec, Master first, null specs left out."""
        specs = self.spec.xgb_replica_specs or {}
        order = in_kind_order(specs, REPLICA_TYPE_ORDER)
        return {t: s for t in order if (s := specs[t]) is not None}

    def master_spec(self) -> ReplicaSpec | None:
        return (self.spec.xgb_replica_specs or {}).get(REPLICA_TYPE_MASTER)

    def worker_spec(self) -> ReplicaSpec | None:
        return (self.spec.xgb_replica_specs or {}).get(REPLICA_TYPE_WORKER)


__all__ = ["DecodeError", "XGBoostJob", "XGBoostJobSpec"]
