"""The run policy of a job, whichever placement its spec uses, and the defaults that fill it.

v0.5.3 put ``cleanPodPolicy``, ``ttlSecondsAfterFinished``, ``activeDeadlineSeconds`` and
``backoffLimit`` directly on the spec; training-operator v1.9 moved them into
``spec.runPolicy`` and added ``schedulingPolicy``, ``suspend`` and ``managedBy``. A job may use
either placement, or both with equal values; different values are refused (divergence D55).
:class:`RunPolicy` and :class:`SchedulingPolicy` are the API types: they decode strictly and
write back exactly what the user wrote. :func:`normalise_run_policy` folds both placements
once per decode into one :class:`NormalisedRunPolicy`, the only run policy the job controller
reads, for every kind.

Where v1.9 changed a v0.5.3 default, v0.5.3's holds unless the operator runs with
``--defaults=v1.9`` or the job carries the annotation ``tf-operator.kubeflow.org/defaults:
v1.9`` (:class:`Defaults`; divergences D56 to D60). Nothing here writes to the stored object.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from tf_operator.apis.common.v1.lifecycle import LifecyclePolicy
from tf_operator.apis.common.v1.types import CLEAN_POD_POLICY_NONE, CLEAN_POD_POLICY_RUNNING
from tf_operator.k8s.objects import json_copy

# runPolicy.managedBy: unset or the first value means the training operator (us); v1.9's
# webhook accepts only these two.
KUBEFLOW_JOBS_CONTROLLER = "kubeflow.org/training-operator"
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
SUPPORTED_MANAGERS = (KUBEFLOW_JOBS_CONTROLLER, MULTIKUEUE_CONTROLLER)

# The releases whose defaults a job can run with, and how a job picks one for itself.
V0_5_3 = "v0.5.3"
V1_9 = "v1.9"
DEFAULTS_ANNOTATION = "tf-operator.kubeflow.org/defaults"

# v0.5.3 retried exactly these under restartPolicy ExitCode (SIGINT, SIGKILL, SIGUSR1,
# SIGTERM); v1.9 retries every code >= 128 (D57).
_V053_RETRYABLE_EXIT_CODES = frozenset({130, 137, 138, 143})


@dataclass(frozen=True)
class Defaults:
    """The defaults of one release, where v1.9 changed v0.5.3's (D56 to D60)."""

    release: str
    clean_pod_policy: str  # when the job names none (D56)

    @property
    def v1_9(self) -> bool:
        return self.release == V1_9

    def is_retryable_exit_code(self, exit_code: int) -> bool:
        """Whether ``restartPolicy: ExitCode`` recreates a pod that exited so (D57)."""
        if self.v1_9:
            return exit_code >= 128
        return exit_code in _V053_RETRYABLE_EXIT_CODES

    def index0_completed(self, exit_code: int, phase: str) -> bool:
        """Whether pod 0 of a type has completed (the worker-0 rule, D58): v1.9 wants its
        default container's exit code 0 and the pod Succeeded; we take either (D22)."""
        if self.v1_9:
            return exit_code == 0 and phase == "Succeeded"
        return exit_code == 0 or phase == "Succeeded"


DEFAULTS_V0_5_3 = Defaults(V0_5_3, CLEAN_POD_POLICY_RUNNING)
DEFAULTS_V1_9 = Defaults(V1_9, CLEAN_POD_POLICY_NONE)
DEFAULTS = {d.release: d for d in (DEFAULTS_V0_5_3, DEFAULTS_V1_9)}


def defaults_for(metadata: Mapping[str, Any], fallback: Defaults) -> Defaults:
    """The defaults a job asks for with its annotation, else ``fallback`` (the operator's)."""
    annotations = metadata.get("annotations")
    release = annotations.get(DEFAULTS_ANNOTATION) if isinstance(annotations, dict) else None
    if release is None:
        return fallback
    found = DEFAULTS.get(release) if isinstance(release, str) else None
    if found is None:
        raise DecodeError(
            f"metadata.annotations[{DEFAULTS_ANNOTATION}]: unknown release {release!r}: "
            f"expected {' or '.join(DEFAULTS)}"
        )
    return found


@dataclass(frozen=True)
class SchedulingPolicy:
    """``spec.runPolicy.schedulingPolicy``: what the job asks of its PodGroup."""

    min_available: int | None = None
    queue: str | None = None
    # resource name -> quantity (a string such as "500m", or a number), as written
    min_resources: dict[str, Any] | None = None
    priority_class: str | None = None
    schedule_timeout_seconds: int | None = None
    # Addition (D77): replica type -> pods of that type the gang needs at least (Volcano's
    # PodGroup minTaskMember); v1.9 has no such field
    min_task_member: dict[str, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = (
        "minAvailable",
        "queue",
        "minResources",
        "priorityClass",
        "scheduleTimeoutSeconds",
        "minTaskMember",
    )

    @classmethod
    def from_dict(cls, data: Any, path: str) -> SchedulingPolicy:
        data = expect_dict(data, path) or {}
        resources = expect_dict(data.get("minResources"), f"{path}.minResources")
        for name, quantity in (resources or {}).items():
            if isinstance(quantity, bool) or not isinstance(quantity, str | int | float):
                raise DecodeError(
                    f"{path}.minResources.{name}: expected a quantity, got {quantity!r}"
                )
        tasks = expect_dict(data.get("minTaskMember"), f"{path}.minTaskMember")
        for name, count in (tasks or {}).items():
            if isinstance(count, bool) or not isinstance(count, int):
                raise DecodeError(
                    f"{path}.minTaskMember.{name}: expected an integer, got {count!r}"
                )
        return cls(
            min_available=opt_int(data, "minAvailable", path),
            queue=opt_str(data, "queue", path),
            min_resources=None if resources is None else json_copy(resources),
            priority_class=opt_str(data, "priorityClass", path),
            schedule_timeout_seconds=opt_int(data, "scheduleTimeoutSeconds", path),
            min_task_member=None if tasks is None else dict(tasks),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        put_present(
            out,
            (
                ("minAvailable", self.min_available),
                ("queue", self.queue),
                ("minResources", json_copy(self.min_resources)),
                ("priorityClass", self.priority_class),
                ("scheduleTimeoutSeconds", self.schedule_timeout_seconds),
                ("minTaskMember", json_copy(self.min_task_member)),
            ),
        )
        out.update(json_copy(self.extra))
        return out


# The fields both placements may give: (JSON name, attribute).
SHARED_FIELDS = (
    ("cleanPodPolicy", "clean_pod_policy"),
    ("ttlSecondsAfterFinished", "ttl_seconds_after_finished"),
    ("activeDeadlineSeconds", "active_deadline_seconds"),
    ("backoffLimit", "backoff_limit"),
)


def decode_shared_fields(data: dict[str, Any], path: str) -> dict[str, Any]:
    """The shared fields of ``data`` (a spec or a ``runPolicy``), by attribute name."""
    return {
        attr: (opt_str if attr == "clean_pod_policy" else opt_int)(data, json_name, path)
        for json_name, attr in SHARED_FIELDS
    }


def shared_field_pairs(source: Any) -> tuple[tuple[str, Any], ...]:
    """``(JSON name, value)`` of the shared fields of ``source``, for ``put_present``."""
    return tuple((json_name, getattr(source, attr)) for json_name, attr in SHARED_FIELDS)


@dataclass
class RunPolicy:
    """``spec.runPolicy`` (training-operator v1.9's ``RunPolicy``), or v0.5.3's four top-level
    fields gathered in the same shape."""

    clean_pod_policy: str | None = None
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    scheduling_policy: SchedulingPolicy | None = None
    suspend: bool | None = None
    managed_by: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = (
        "cleanPodPolicy",
        "ttlSecondsAfterFinished",
        "activeDeadlineSeconds",
        "backoffLimit",
        "schedulingPolicy",
        "suspend",
        "managedBy",
    )

    @classmethod
    def from_dict(cls, data: Any, path: str) -> RunPolicy:
        data = expect_dict(data, path) or {}
        scheduling = data.get("schedulingPolicy")
        return cls(
            **decode_shared_fields(data, path),
            scheduling_policy=None
            if scheduling is None
            else SchedulingPolicy.from_dict(scheduling, f"{path}.schedulingPolicy"),
            suspend=opt_bool(data, "suspend", path),
            managed_by=opt_str(data, "managedBy", path),
            extra=rest(data, cls._KEYS),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        put_present(
            out,
            (
                *shared_field_pairs(self),
                (
                    "schedulingPolicy",
                    None if self.scheduling_policy is None else self.scheduling_policy.to_dict(),
                ),
                ("suspend", self.suspend),
                ("managedBy", self.managed_by),
            ),
        )
        out.update(json_copy(self.extra))
        return out


class RunPolicyConflictError(DecodeError):
    """``spec.runPolicy`` and v0.5.3's top-level field give different values."""


@dataclass(frozen=True)
class NormalisedRunPolicy:
    """The run policy the job controller obeys: both placements folded, defaults applied."""

    clean_pod_policy: str = CLEAN_POD_POLICY_RUNNING
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    scheduling_policy: SchedulingPolicy | None = None
    suspend: bool = False
    managed_by: str | None = None
    defaults: Defaults = DEFAULTS_V0_5_3
    # the lifecycle policy in force (D100): None for a job that asks for nothing new
    lifecycle: LifecyclePolicy | None = None


def other_manager(raw: Mapping[str, Any]) -> str | None:
    """The controller an undecoded job's ``spec.runPolicy.managedBy`` names when it is not
    this operator (v1.9 leaves such a job alone before reading anything else of it)."""
    spec = raw.get("spec")
    run_policy = spec.get("runPolicy") if isinstance(spec, dict) else None
    manager = run_policy.get("managedBy") if isinstance(run_policy, dict) else None
    if manager is None or manager == KUBEFLOW_JOBS_CONTROLLER:
        return None
    return str(manager)


def normalise_run_policy(
    run_policy: RunPolicy | None,
    top_level: RunPolicy,
    defaults: Defaults,
    path: str = "spec",
    lifecycle: LifecyclePolicy | None = None,
) -> NormalisedRunPolicy:
    """Fold ``spec.runPolicy`` and the top-level fields (``top_level``) into one policy.

    Raises :class:`RunPolicyConflictError` naming both fields when they disagree; the CRD's
    rules refuse such a job at admission already, this guards clusters that do not run them.
    """
    written = run_policy or RunPolicy()
    values: dict[str, Any] = {}
    for json_name, attr in SHARED_FIELDS:
        nested, flat = getattr(written, attr), getattr(top_level, attr)
        if nested is not None and flat is not None and nested != flat:
            raise RunPolicyConflictError(
                f"{path}.runPolicy.{json_name} ({nested}) and {path}.{json_name} ({flat}) "
                "differ: give the field once, or the same value in both places"
            )
        values[attr] = nested if nested is not None else flat
    if values["clean_pod_policy"] is None:
        values["clean_pod_policy"] = defaults.clean_pod_policy
    return NormalisedRunPolicy(
        **values,
        scheduling_policy=written.scheduling_policy,
        suspend=bool(written.suspend),
        managed_by=written.managed_by,
        defaults=defaults,
        lifecycle=lifecycle,
    )
