"""The TFJob resource (``kubeflow.org/v1``) as dataclasses that round-trip its JSON.

``TFJob.from_dict`` decodes an object as the API server returns it; ``to_dict`` gives it back
with every field we did not model (in metadata, spec, status or at the top level) untouched.
``metadata`` stays a plain dict: the controller only reads name, namespace, uid and friends.
Malformed input raises :class:`DecodeError` with the JSON path of the offending field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tf_operator.apis.common.v1.fields import (
    DecodeError,
    expect_dict,
    opt_bool,
    opt_str,
    put_present,
    rest,
)
from tf_operator.apis.common.v1.job import JobObject, decode_envelope
from tf_operator.apis.common.v1.lifecycle import policy_in_force
from tf_operator.apis.common.v1.run_policy import (
    DEFAULTS_V0_5_3,
    SHARED_FIELDS,
    Defaults,
    NormalisedRunPolicy,
    RunPolicy,
    decode_shared_fields,
    defaults_for,
    normalise_run_policy,
    shared_field_pairs,
)
from tf_operator.apis.common.v1.types import (
    JobStatus,
    ReplicaSpec,
    decode_replica_specs,
    encode_replica_specs,
    in_kind_order,
)
from tf_operator.apis.tensorflow.v1.constants import (
    API_VERSION,
    KIND,
    REPLICA_TYPE_CHIEF,
    REPLICA_TYPE_EVAL,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_ORDER,
    REPLICA_TYPE_WORKER,
)
from tf_operator.k8s.objects import json_copy


@dataclass
class TFJobSpec:
    """``spec`` of a TFJob. ``tf_replica_specs`` is ``None`` when the key is absent or null.

    v0.5.3's run-policy fields sit on the spec; training-operator v1.9's ``runPolicy``,
    ``successPolicy`` and ``enableDynamicWorker`` are kept beside them as written.
    """

    tf_replica_specs: dict[str, ReplicaSpec | None] | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    clean_pod_policy: str | None = None
    ttl_seconds_after_finished: int | None = None
    run_policy: RunPolicy | None = None
    success_policy: str | None = None
    enable_dynamic_worker: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = (
        "activeDeadlineSeconds",
        "backoffLimit",
        "cleanPodPolicy",
        "ttlSecondsAfterFinished",
        "tfReplicaSpecs",
        "runPolicy",
        "successPolicy",
        "enableDynamicWorker",
    )

    @classmethod
    def from_dict(cls, data: Any, path: str = "spec") -> TFJobSpec:
        data = expect_dict(data, path) or {}
        run_policy = data.get("runPolicy")
        return cls(
            tf_replica_specs=decode_replica_specs(data, "tfReplicaSpecs", path),
            **decode_shared_fields(data, path),
            run_policy=None
            if run_policy is None
            else RunPolicy.from_dict(run_policy, f"{path}.runPolicy"),
            success_policy=opt_str(data, "successPolicy", path),
            enable_dynamic_worker=opt_bool(data, "enableDynamicWorker", path),
            extra=rest(data, cls._KEYS),
        )

    def top_level_run_policy(self) -> RunPolicy:
        """v0.5.3's run-policy fields, in the shape of ``runPolicy``."""
        return RunPolicy(**{attr: getattr(self, attr) for _, attr in SHARED_FIELDS})

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        put_present(
            out,
            (
                *shared_field_pairs(self),
                ("runPolicy", None if self.run_policy is None else self.run_policy.to_dict()),
                ("successPolicy", self.success_policy),
            ),
        )
        out["tfReplicaSpecs"] = encode_replica_specs(self.tf_replica_specs)
        put_present(out, (("enableDynamicWorker", self.enable_dynamic_worker),))
        out.update(json_copy(self.extra))
        return out


@dataclass
class TFJob(JobObject):
    """A TFJob: metadata (dict), spec and status, plus any unknown top-level keys."""

    metadata: dict[str, Any] = field(default_factory=dict)
    spec: TFJobSpec = field(default_factory=TFJobSpec)
    status: JobStatus = field(default_factory=JobStatus)
    api_version: str = API_VERSION
    kind: str = KIND
    extra: dict[str, Any] = field(default_factory=dict)
    # Derived, never written: what the controller obeys (both placements, defaults applied).
    run_policy: NormalisedRunPolicy = field(default_factory=NormalisedRunPolicy)

    @classmethod
    def from_dict(cls, data: Any, defaults: Defaults = DEFAULTS_V0_5_3) -> TFJob:
        """Decode a TFJob; raises :class:`DecodeError` if a modelled field has the wrong type
        or the two placements of a run-policy field disagree. ``defaults`` are the operator's;
        the job's ``tf-operator.kubeflow.org/defaults`` annotation wins over them."""
        job = decode_envelope(data, KIND, API_VERSION, TFJobSpec.from_dict)
        return cls(
            metadata=job.metadata,
            spec=job.spec,
            run_policy=normalise_run_policy(
                job.spec.run_policy,
                job.spec.top_level_run_policy(),
                defaults_for(job.metadata, defaults),
                lifecycle=policy_in_force(job.spec.extra, job.status.extra),
            ),
            status=job.status,
            api_version=job.api_version,
            kind=job.kind,
            extra=job.extra,
        )

    # -- replica-type helpers --

    def replica_types(self) -> list[str]:
        """The keys of ``tfReplicaSpecs`` in the port's fixed order (see REPLICA_TYPE_ORDER)."""
        return ordered_replica_types(self.spec.tf_replica_specs or {})

    def replica_specs(self) -> dict[str, ReplicaSpec]:
        """Replica type → spec in the fixed order, null specs left out."""
        specs = self.spec.tf_replica_specs or {}
        return {t: s for t in self.replica_types() if (s := specs[t]) is not None}


def ordered_replica_types(specs: dict[str, Any]) -> list[str]:
    """Known types in REPLICA_TYPE_ORDER, then any others sorted."""
    return in_kind_order(specs, REPLICA_TYPE_ORDER)


def is_chief_or_master(rtype: str) -> bool:
    return rtype in (REPLICA_TYPE_CHIEF, REPLICA_TYPE_MASTER)


def is_worker(rtype: str) -> bool:
    return rtype == REPLICA_TYPE_WORKER


def is_evaluator(rtype: str) -> bool:
    return rtype == REPLICA_TYPE_EVAL


def contains_chief_or_master_spec(job: TFJob) -> bool:
    specs = job.spec.tf_replica_specs or {}
    return REPLICA_TYPE_CHIEF in specs or REPLICA_TYPE_MASTER in specs


__all__ = [
    "DecodeError",
    "TFJob",
    "TFJobSpec",
    "contains_chief_or_master_spec",
    "is_chief_or_master",
    "is_evaluator",
    "is_worker",
    "ordered_replica_types",
]
