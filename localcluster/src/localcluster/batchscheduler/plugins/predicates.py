"""predicates: where a task may go, apart from resources.

Checks in Volcano v1.8's effective order, first failure reported: cordoned node, node
selector and required node affinity, untolerated NoSchedule/NoExecute taints, then the pod
count (Volcano evaluates the pod count first but reports it only when nothing else fails).
The matchers are the default scheduler's, so both schedulers agree on where a pod may go.
Reasons are the plain Kubernetes texts (Volcano prefixed them with its plugin names: difference 11).
Resource fit is the allocate action's business.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localcluster.batchscheduler.api import NodeInfo, TaskInfo
from localcluster.scheduler.predicates import (
    REASON_AFFINITY,
    REASON_UNSCHEDULABLE,
    matches_node_selector_and_affinity,
    taint_reason,
    tolerates_unschedulable,
    untolerated_taint,
)

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

REASON_POD_NUMBER = "node(s) pod number exceeded"


def static_reasons(task: TaskInfo, node: NodeInfo) -> list[str]:
    """The checks that depend only on the pod's placement rules and the node object."""
    if (node.node.get("spec") or {}).get("unschedulable") and not tolerates_unschedulable(task.pod):
        return [REASON_UNSCHEDULABLE]
    if not matches_node_selector_and_affinity(task.pod, node.node):
        return [REASON_AFFINITY]
    taint = untolerated_taint(task.pod, node.node)
    if taint is not None:
        return [taint_reason(taint)]
    return []


def predicate_reasons(task: TaskInfo, node: NodeInfo) -> list[str]:
    reasons = static_reasons(task, node)
    if not reasons and node.max_pods is not None and node.pod_count + 1 > node.max_pods:
        return [REASON_POD_NUMBER]
    return reasons


class PredicatesPlugin:
    name = "predicates"

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments

    def on_open(self, ssn: Session) -> None:
        # a session's nodes do not change: static results are shared by equal placements
        static: dict[tuple[str, str], list[str]] = {}

        def predicate(task: TaskInfo, node: NodeInfo) -> list[str]:
            key = (task.placement, node.name)
            reasons = static.get(key)
            if reasons is None:
                reasons = static[key] = static_reasons(task, node)
            if not reasons and node.max_pods is not None and node.pod_count + 1 > node.max_pods:
                return [REASON_POD_NUMBER]
            return reasons

        ssn.register(self.name, "Predicate", predicate)

    def on_close(self, ssn: Session) -> None:
        pass
