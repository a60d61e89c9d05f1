"""The TFJob controller's counters, under v0.5.3's exact names (see :mod:`tf_operator.metrics`).

Counting follows transitions, not evaluations (divergence D23): a job counts as created when
the controller first records its ``Created`` condition, as successful/failed when its
Succeeded/Failed condition is first set (limit failures included), as restarted each time the
controller restarts pods of it, and as deleted once when a job it had seen disappears.
``tf_operator_is_leader`` is a gauge of the app (``tf_operator.app.server``).
"""

from __future__ import annotations

from tf_operator.metrics import LegacyCounter, register

JOBS_CREATED = LegacyCounter("tf_operator_jobs_created", "Counts number of TF jobs created")
JOBS_DELETED = LegacyCounter("tf_operator_jobs_deleted", "Counts number of TF jobs deleted")
JOBS_SUCCESSFUL = LegacyCounter(
    "tf_operator_jobs_successful", "Counts number of TF jobs successful"
)
JOBS_FAILED = LegacyCounter("tf_operator_jobs_failed", "Counts number of TF jobs failed")
JOBS_RESTARTED = LegacyCounter("tf_operator_jobs_restarted", "Counts number of TF jobs restarted")

ALL_COUNTERS = (JOBS_CREATED, JOBS_DELETED, JOBS_SUCCESSFUL, JOBS_FAILED, JOBS_RESTARTED)

register(ALL_COUNTERS)
