"""allocate: place whole gangs, queue by queue and job by job.

Queues are served by queue order and take turns; a queue goes back into the queue heap after
its turn, so the next turn goes to the queue whose share is now the lowest. Within a queue the
best job (job order) gets a turn: its Pending, non-best-effort tasks are placed in task order inside one
``Statement``. A task that finds no node ends the job's turn (the gang waits, as upstream);
a job that becomes ready while tasks remain yields its turn and is queued again. At the end
of a turn a ready job is committed (its pods bound), a job that is neither ready nor
pipelined is discarded, so a gang never holds resources it cannot use (difference 1).

Volcano flavour: resource room (future idle) is checked before the predicates, the predicate
error cache applies, the best node is chosen among nodes with idle room first, then among
those with room once resources are released. kube-batch flavour: nodes passing the
predicates are tried in score order; the first with idle room wins, a node with room once
resources are released gets the task pipelined, and the nodes that lacked room are kept for
the fit text (``JobInfo.fit_delta``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from localcluster.batchscheduler.actions.common import best_node, by_score, feasible_nodes
from localcluster.batchscheduler.api import JobInfo, QueueInfo, TaskInfo, TaskStatus, short_of
from localcluster.batchscheduler.errcache import PredicateErrorCache
from localcluster.batchscheduler.pqueue import PriorityQueue
from localcluster.batchscheduler.session import Statement

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

logger = logging.getLogger(__name__)


def execute(ssn: Session) -> None:
    volcano = ssn.flavour.volcano
    enqueue_configured = "enqueue" in ssn.conf.actions
    queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_key)
    jobs_of: dict[str, PriorityQueue[JobInfo]] = {}
    for job in ssn.jobs.values():
        if volcano and job.is_pending_phase():
            if enqueue_configured:
                continue
            job.phase = "Inqueue"
        if ssn.job_valid(job) is not None:
            continue
        if job.queue not in jobs_of:
            jobs_of[job.queue] = PriorityQueue(ssn.job_key)
            queues.push(ssn.queues[job.queue])
        jobs_of[job.queue].push(job)

    pending: dict[str, PriorityQueue[TaskInfo]] = {}
    while queues:
        queue = queues.pop()
        if ssn.overused(queue):
            logger.debug("%s: queue %s is overused", ssn.flavour.name, queue.name)
            continue
        jobs = jobs_of[queue.name]
        if not jobs:
            continue
        job = jobs.pop()
        if job.uid not in pending:
            tasks: PriorityQueue[TaskInfo] = PriorityQueue(ssn.task_key)
            for task in job.with_status(TaskStatus.PENDING):
                if not task.best_effort:
                    tasks.push(task)
            pending[job.uid] = tasks
        if pending[job.uid]:
            take_turn(ssn, job, pending[job.uid], jobs)
        # Back into the heap only after the turn, so queue order weighs the share this turn
        # changed (kube-batch v0.4.2; Volcano from v1.10.0, difference 17).
        queues.push(queue)


def take_turn(
    ssn: Session, job: JobInfo, tasks: PriorityQueue[TaskInfo], jobs: PriorityQueue[JobInfo]
) -> None:
    """One job's turn; a failure inside it is logged, undone, and the job skipped."""
    statement = Statement(ssn)
    try:
        _place_tasks(ssn, job, tasks, jobs, statement)
        if ssn.job_ready(job):
            logger.debug("%s: job %s ready, commit", ssn.flavour.name, job.uid)
            statement.commit()
        elif not ssn.job_pipelined(job):
            logger.debug("%s: job %s not ready, discard", ssn.flavour.name, job.uid)
            statement.discard()
    except Exception:  # noqa: BLE001 - one job's bad data must not end the cycle
        logger.exception("%s: allocating job %s failed; skipped", ssn.flavour.name, job.uid)
        statement.discard()
        ssn.summary.skipped_jobs.append(job.uid)


def _place_tasks(
    ssn: Session,
    job: JobInfo,
    tasks: PriorityQueue[TaskInfo],
    jobs: PriorityQueue[JobInfo],
    statement: Statement,
) -> None:
    volcano = ssn.flavour.volcano
    cache = PredicateErrorCache(ssn.conf.error_cache, job.uid)
    while tasks:
        task = tasks.pop()
        if volcano:
            placed = _place_volcano(ssn, job, task, cache, statement)
        else:
            placed = _place_kube_batch(ssn, job, task, cache, statement)
        if not placed:
            break
        if ssn.job_ready(job) and tasks:
            jobs.push(job)
            break


def _place_volcano(
    ssn: Session, job: JobInfo, task: TaskInfo, cache: PredicateErrorCache, statement: Statement
) -> bool:
    nodes, errors, idle = feasible_nodes(ssn, task, cache, with_resources=True)
    if not nodes:
        job.fit_errors[task.key] = errors
        logger.debug("%s: no node for %s: %s", ssn.flavour.name, task.key, errors)
        return False
    best = best_node(ssn, task, idle or nodes)
    if idle:
        statement.allocate(task, best.name)
    else:
        statement.pipeline(task, best.name)
    logger.debug("%s: %s -> %s (%s)", ssn.flavour.name, task.key, best.name, task.status.value)
    return True


def _place_kube_batch(
    ssn: Session, job: JobInfo, task: TaskInfo, cache: PredicateErrorCache, statement: Statement
) -> bool:
    nodes, _, _ = feasible_nodes(ssn, task, cache, with_resources=False)
    job.fit_delta = {}
    for node in by_score(ssn, task, nodes):
        if node.fits_idle(task.init_resreq):
            statement.allocate(task, node.name)
            return True
        job.fit_delta[node.name] = short_of(task.resreq, node.idle)
        if node.fits_future(task.init_resreq):
            statement.pipeline(task, node.name)
            return True
    logger.debug("%s: no node for %s", ssn.flavour.name, task.key)
    return False
