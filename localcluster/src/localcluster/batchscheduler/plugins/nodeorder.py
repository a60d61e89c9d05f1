"""nodeorder: score feasible nodes on Kubernetes' 0-100 scale (spec §6.7).

``leastrequested`` favours free nodes, ``balancedresource`` nodes whose cpu and memory use stay
alike; both count this session's allocations. Weights come from the plugin's arguments
(``leastrequested.weight``, ``balancedresource.weight``, default 1). Ties are broken by node
name by the allocate action (upstream picked at random, §11 #8).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from localcluster.batchscheduler.api import CPU, MEMORY, ZERO, NodeInfo, TaskInfo

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

MAX_SCORE = 100


def least_requested(task: TaskInfo, node: NodeInfo) -> int:
    scores = []
    for name in (CPU, MEMORY):
        capacity = node.allocatable.get(name, ZERO)
        free = capacity - node.used.get(name, ZERO) - task.resreq.get(name, ZERO)
        scores.append(0 if capacity <= 0 or free < 0 else math.floor(free * MAX_SCORE / capacity))
    return math.floor(Fraction(sum(scores), len(scores)))


def balanced_resource(task: TaskInfo, node: NodeInfo) -> int:
    fractions = []
    for name in (CPU, MEMORY):
        capacity = node.allocatable.get(name, ZERO)
        if capacity <= 0:
            return 0
        fractions.append((node.used.get(name, ZERO) + task.resreq.get(name, ZERO)) / capacity)
    if any(f >= 1 for f in fractions):
        return 0
    return math.floor((1 - abs(fractions[0] - fractions[1])) * MAX_SCORE)


class NodeOrderPlugin:
    name = "nodeorder"

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.least_weight = int(arguments.get("leastrequested.weight", 1))
        self.balanced_weight = int(arguments.get("balancedresource.weight", 1))

    def on_open(self, ssn: Session) -> None:
        def score(task: TaskInfo, node: NodeInfo) -> int:
            return self.least_weight * least_requested(task, node) + (
                self.balanced_weight * balanced_resource(task, node)
            )

        ssn.register(self.name, "NodeOrder", score)

    def on_close(self, ssn: Session) -> None:
        pass
