"""conformance: never evict system pods (kube-system, system-*-critical priority classes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localcluster.batchscheduler.api import TaskInfo

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

CRITICAL_CLASSES = ("system-cluster-critical", "system-node-critical")
SYSTEM_NAMESPACE = "kube-system"


def evictable(task: TaskInfo) -> bool:
    class_name = (task.pod.get("spec") or {}).get("priorityClassName")
    return task.namespace != SYSTEM_NAMESPACE and class_name not in CRITICAL_CLASSES


class ConformancePlugin:
    name = "conformance"

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments

    def on_open(self, ssn: Session) -> None:
        def victims(_actor: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
            return [t for t in candidates if evictable(t)]

        ssn.register(self.name, "Preemptable", victims)
        ssn.register(self.name, "Reclaimable", victims)

    def on_close(self, ssn: Session) -> None:
        pass
