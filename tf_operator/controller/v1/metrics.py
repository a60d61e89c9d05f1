"""training-operator v1.9's job counters, one family per transition labelled by ``framework``.

Every kind counts its jobs here under its framework (``tensorflow``, ``pytorch``), as v1.9's
``training_operator_jobs_{created,deleted,successful,failed,restarted}_total`` do, so one
query covers every kind; TFJob also keeps v0.5.3's unlabelled ``tf_operator_jobs_*``
(:mod:`tf_operator.controller.v1.tensorflow.metrics`). v1.9 also labels them with the job's
namespace; ours do not (divergence D82). Counting follows transitions (D23).
"""

from __future__ import annotations

from tf_operator.common.jobcontroller.kind import JobMetrics
from tf_operator.metrics import Counters, LabelledCounter, LegacyCounter, register_families

FRAMEWORK_LABEL = "framework"

JOBS_CREATED = LabelledCounter(
    "training_operator_jobs_created", "Counts number of jobs created", FRAMEWORK_LABEL
)
JOBS_DELETED = LabelledCounter(
    "training_operator_jobs_deleted", "Counts number of jobs deleted", FRAMEWORK_LABEL
)
JOBS_SUCCESSFUL = LabelledCounter(
    "training_operator_jobs_successful", "Counts number of jobs successful", FRAMEWORK_LABEL
)
JOBS_FAILED = LabelledCounter(
    "training_operator_jobs_failed", "Counts number of jobs failed", FRAMEWORK_LABEL
)
JOBS_RESTARTED = LabelledCounter(
    "training_operator_jobs_restarted", "Counts number of jobs restarted", FRAMEWORK_LABEL
)
ALL_FAMILIES = (JOBS_CREATED, JOBS_DELETED, JOBS_SUCCESSFUL, JOBS_FAILED, JOBS_RESTARTED)

register_families(ALL_FAMILIES)


def framework_metrics(
    framework: str, legacy: tuple[LegacyCounter, ...] | None = None
) -> JobMetrics:
    """A kind's job counters: its framework's in every family, plus ``legacy`` (created,
    deleted, successful, failed, restarted, in that order) counted alongside."""
    counters = [family.labels(framework) for family in ALL_FAMILIES]
    if legacy is None:
        return JobMetrics(*counters)
    return JobMetrics(*(Counters(c, old) for c, old in zip(counters, legacy, strict=True)))
