"""backfill: place best-effort tasks (no requests) of jobs that may run.

Each such task goes to the best node whose predicates pass (pod count included). A job's
backfilled tasks are bound at once when the job is ready; otherwise they are discarded, so
the best-effort members of a gang whose other pods cannot fit stay Pending too.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from localcluster.batchscheduler.actions.common import best_node, feasible_nodes
from localcluster.batchscheduler.api import TaskStatus
from localcluster.batchscheduler.errcache import PredicateErrorCache
from localcluster.batchscheduler.session import Statement

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

logger = logging.getLogger(__name__)


def execute(ssn: Session) -> None:
    volcano = ssn.flavour.volcano
    for job in sorted(ssn.jobs.values(), key=lambda j: (j.created, j.uid)):
        if volcano and job.is_pending_phase():
            continue
        if ssn.job_valid(job) is not None:
            continue
        tasks = [t for t in job.with_status(TaskStatus.PENDING) if t.best_effort]
        if not tasks:
            continue
        statement = Statement(ssn)
        cache = PredicateErrorCache(ssn.conf.error_cache if volcano else "off", job.uid)
        try:
            for task in sorted(tasks, key=ssn.task_key):
                nodes, errors, _ = feasible_nodes(ssn, task, cache, with_resources=False)
                if not nodes:
                    job.fit_errors[task.key] = errors
                    break
                statement.allocate(task, best_node(ssn, task, nodes).name)
            if ssn.job_ready(job):
                statement.commit()
            else:
                statement.discard()
        except Exception:  # noqa: BLE001 - one job's bad data must not end the cycle
            logger.exception("%s: backfilling job %s failed; skipped", ssn.flavour.name, job.uid)
            statement.discard()
            ssn.summary.skipped_jobs.append(job.uid)
