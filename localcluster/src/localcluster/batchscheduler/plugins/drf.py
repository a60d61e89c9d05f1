"""drf: dominant resource fairness between jobs.

A job's share is the largest allocated/total over the dimensions, with ``total`` the session's
allocatable; jobs with the lower share go first. As preemption judge, a candidate is a victim
when the preemptor's job, with the preemptor added, would not hold a larger share than the
candidate's job holds with the candidate removed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localcluster.batchscheduler.api import JobInfo, Resources, TaskInfo, add, plus, share

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

SHARE_EPSILON = 1e-6


class DrfPlugin:
    name = "drf"

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments
        self.allocated: dict[str, Resources] = {}
        self.shares: dict[str, float] = {}

    def on_open(self, ssn: Session) -> None:
        total = ssn.total
        for job in ssn.jobs.values():
            self.allocated[job.uid] = job.allocated()
            self.shares[job.uid] = share(self.allocated[job.uid], total)

        def job_order(left: JobInfo, right: JobInfo) -> int:
            lshare, rshare = self.shares[left.uid], self.shares[right.uid]
            return -1 if lshare < rshare else (1 if lshare > rshare else 0)

        def preemptable(preemptor: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
            mine = share(plus(self.allocated[preemptor.job], preemptor.resreq), total)
            victims = []
            for task in candidates:
                theirs = share(plus(self.allocated[task.job], task.resreq, -1), total)
                if mine < theirs or abs(mine - theirs) <= SHARE_EPSILON:
                    victims.append(task)
            return victims

        def update(task: TaskInfo, sign: int) -> None:
            add(self.allocated[task.job], task.resreq, sign)
            self.shares[task.job] = share(self.allocated[task.job], total)

        ssn.register(self.name, "JobOrder", job_order)
        ssn.register(self.name, "Preemptable", preemptable)
        ssn.add_event_handler(lambda t: update(t, +1), lambda t: update(t, -1))

    def on_close(self, ssn: Session) -> None:
        self.allocated, self.shares = {}, {}
