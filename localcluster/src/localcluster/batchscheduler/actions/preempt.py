"""preempt: a starving job takes resources from other jobs of its own queue.

Preemptors are jobs whose ready + pipelined tasks are fewer than minMember (difference 12),
served queue by queue in job order. Each gets one statement; its Pending tasks are tried in
task order with the node loop of ``evicting``, candidates being Running tasks of other jobs
in the same queue and the verdict ``Preemptable`` (priority, gang, conformance, drf by
default); a task that fits without evictions is simply pipelined. As soon as the job is pipelined the statement is committed; if its tasks run out
first, everything is undone.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from localcluster.batchscheduler.actions.evicting import make_room, running_on
from localcluster.batchscheduler.api import JobInfo, NodeInfo, TaskInfo, TaskStatus
from localcluster.batchscheduler.session import Statement

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

logger = logging.getLogger(__name__)


def starving(job: JobInfo) -> bool:
    return job.ready_count() + job.count(TaskStatus.PIPELINED) < job.min_member


def execute(ssn: Session) -> None:
    for queue in sorted(ssn.queues.values(), key=ssn.queue_key):
        preemptors = [
            job
            for job in ssn.jobs.values()
            if job.queue == queue.name
            and job.count(TaskStatus.PENDING)
            and starving(job)
            and not (ssn.flavour.volcano and job.is_pending_phase())
            and ssn.job_valid(job) is None
        ]
        for job in sorted(preemptors, key=ssn.job_key):
            _preempt_for(ssn, job)


def _preempt_for(ssn: Session, job: JobInfo) -> None:
    statement = Statement(ssn)

    def candidates(node: NodeInfo) -> list[TaskInfo]:
        def same_queue_other_job(t: TaskInfo) -> bool:
            return t.job != job.uid and ssn.jobs[t.job].queue == job.queue

        return running_on(node, same_queue_other_job)

    for task in sorted(job.with_status(TaskStatus.PENDING), key=ssn.task_key):
        make_room(ssn, statement, task, candidates, "Preemptable", "preempt")
        if ssn.job_pipelined(job):
            logger.debug("%s: preempting for %s, commit", ssn.flavour.name, job.uid)
            statement.commit()
            return
    statement.discard()
