"""The node loop reclaim and preempt share: make room for one task by evicting others.

For each node (name order) whose predicates pass: if the node will have room once what it is
already releasing is gone, pipeline the task there and evict nothing; otherwise ask the
session's verdict hook which of the node's candidates may go (victim-first order), skip the
node if even all of them would not make room, else evict them in order until the task fits
the node's future idle room and pipeline it there. Everything goes through the caller's
statement, so a gang that cannot be served undoes its evictions (difference 6).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from localcluster.batchscheduler.actions.common import victim_first
from localcluster.batchscheduler.api import NodeInfo, TaskInfo, TaskStatus, add, fits
from localcluster.batchscheduler.session import Statement

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

Candidates = Callable[[NodeInfo], list[TaskInfo]]


def fits_idle_somewhere(ssn: Session, task: TaskInfo) -> bool:
    """Allocate can place this task without evicting anything."""
    return any(fits(task.init_resreq, n.idle) and not ssn.predicate(task, n) for n in ssn.node_list)


def make_room(
    ssn: Session,
    statement: Statement,
    task: TaskInfo,
    candidates: Candidates,
    verdict: str,
    reason: str,
) -> bool:
    """Pipeline ``task`` on some node, evicting victims if needed; False if no node works."""
    for node in ssn.node_list:
        if ssn.predicate(task, node):
            continue
        if fits(task.init_resreq, node.future_idle):
            statement.pipeline(task, node.name)
            return True
        victims = ssn.victims(verdict, task, victim_first(candidates(node)))
        reachable = node.future_idle
        for victim in victims:
            add(reachable, victim.resreq)
        if not fits(task.init_resreq, reachable):
            continue
        for victim in victims:
            if fits(task.init_resreq, node.future_idle):
                break
            statement.evict(victim, reason)
        statement.pipeline(task, node.name)
        return True
    return False


def running_on(node: NodeInfo, keep: Callable[[TaskInfo], bool]) -> list[TaskInfo]:
    return [
        t
        for t in node.tasks.values()
        if t.status == TaskStatus.RUNNING and t.preemptable and keep(t)
    ]
