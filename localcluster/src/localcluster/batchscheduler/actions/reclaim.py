"""reclaim: a queue below its deserved share takes resources back from other queues.

Queues take turns in queue order (overused ones are skipped); each turn serves the best job
with Pending tasks, one task at a time. A task that allocate could place as it is is left to
allocate; otherwise Running tasks of jobs in *other*, reclaimable queues are candidates and
the ``Reclaimable`` verdict (gang, conformance, proportion by default) picks the victims.
Each job's evictions and pipelinings form one statement, committed at the end of the action
when the job is pipelined (ready + pipelined >= minMember), discarded otherwise.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from localcluster.batchscheduler.actions.evicting import fits_idle_somewhere, make_room, running_on
from localcluster.batchscheduler.api import JobInfo, NodeInfo, QueueInfo, TaskInfo, TaskStatus
from localcluster.batchscheduler.pqueue import PriorityQueue
from localcluster.batchscheduler.session import Statement

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

logger = logging.getLogger(__name__)


def execute(ssn: Session) -> None:
    queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_key)
    jobs_of: dict[str, PriorityQueue[JobInfo]] = {}
    tasks_of: dict[str, PriorityQueue[TaskInfo]] = {}
    for job in ssn.jobs.values():
        if ssn.flavour.volcano and job.is_pending_phase():
            continue
        if ssn.job_valid(job) is not None or not job.count(TaskStatus.PENDING):
            continue
        if job.queue not in jobs_of:
            jobs_of[job.queue] = PriorityQueue(ssn.job_key)
            queues.push(ssn.queues[job.queue])
        jobs_of[job.queue].push(job)
        tasks_of[job.uid] = PriorityQueue(ssn.task_key)
        for task in job.with_status(TaskStatus.PENDING):
            tasks_of[job.uid].push(task)

    statements: dict[str, tuple[JobInfo, Statement]] = {}
    while queues:
        queue = queues.pop()
        if ssn.overused(queue) or not jobs_of[queue.name]:
            continue
        job = jobs_of[queue.name].pop()
        tasks = tasks_of[job.uid]
        queues.push(queue)
        if not tasks:
            continue
        task = tasks.pop()
        if fits_idle_somewhere(ssn, task):
            continue
        _, statement = statements.setdefault(job.uid, (job, Statement(ssn)))

        def candidates(node: NodeInfo, job: JobInfo = job) -> list[TaskInfo]:
            def other_queue(t: TaskInfo) -> bool:
                owner = ssn.jobs[t.job].queue
                return owner != job.queue and ssn.queues[owner].reclaimable

            return running_on(node, other_queue)

        if make_room(ssn, statement, task, candidates, "Reclaimable", "reclaim"):
            jobs_of[queue.name].push(job)
    for job, statement in statements.values():
        if ssn.job_pipelined(job):
            statement.commit()
        else:
            statement.discard()
