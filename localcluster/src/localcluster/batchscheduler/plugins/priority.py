"""priority: higher task and job priority first; Volcano's preemption rule.

kube-batch v0.4.2's priority plugin had no preemptable hook; both flavours use Volcano's rule
(difference 7): a task of another job may be evicted only when that job's priority is lower,
a task of the same job only when its own priority is lower.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localcluster.batchscheduler.api import TaskInfo

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session


def higher_first(left: int, right: int) -> int:
    return -1 if left > right else (1 if left < right else 0)


def by_priority(left: Any, right: Any) -> int:
    """Tasks or jobs, higher ``priority`` first."""
    return higher_first(left.priority, right.priority)


class PriorityPlugin:
    name = "priority"

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments

    def on_open(self, ssn: Session) -> None:
        ssn.register(self.name, "TaskOrder", by_priority)
        ssn.register(self.name, "JobOrder", by_priority)

        def preemptable(preemptor: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
            mine = ssn.jobs[preemptor.job]
            victims = []
            for task in candidates:
                if task.job != preemptor.job:
                    if ssn.jobs[task.job].priority < mine.priority:
                        victims.append(task)
                elif task.priority < preemptor.priority:
                    victims.append(task)
            return victims

        ssn.register(self.name, "Preemptable", preemptable)

    def on_close(self, ssn: Session) -> None:
        pass
