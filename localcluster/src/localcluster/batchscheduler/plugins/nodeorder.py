"""nodeorder: score feasible nodes on Kubernetes' 0-100 scale.

``leastrequested`` favours free nodes, ``balancedresource`` nodes whose cpu and memory use stay
alike; both count this session's allocations, and both count requests as Kubernetes' scoring
does: non-zero (``TaskInfo.nonzero``, ``NodeInfo.nonzero``), so a container without requests
weighs 100m cpu and 200Mi memory and such pods spread instead of piling onto one node (fit
still uses the real requests). Weights come from the plugin's arguments
(``leastrequested.weight``, ``balancedresource.weight``, default 1). Ties are broken by node
name by the allocate action (upstream picked at random: difference 8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localcluster.batchscheduler.api import CPU, MEMORY, NodeInfo, TaskInfo

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

MAX_SCORE = 100


def least_requested(task: TaskInfo, node: NodeInfo) -> int:
    scores = []
    for name in (CPU, MEMORY):
        capacity = node.allocatable.get(name, 0)
        free = capacity - node.nonzero.get(name, 0) - task.nonzero.get(name, 0)
        scores.append(0 if capacity <= 0 or free < 0 else free * MAX_SCORE // capacity)
    return sum(scores) // len(scores)


def balanced_resource(task: TaskInfo, node: NodeInfo) -> int:
    """floor((1 - |cpu fraction - memory fraction|) * 100), in exact integer arithmetic."""
    cpu_cap, mem_cap = node.allocatable.get(CPU, 0), node.allocatable.get(MEMORY, 0)
    if cpu_cap <= 0 or mem_cap <= 0:
        return 0
    cpu = node.nonzero.get(CPU, 0) + task.nonzero.get(CPU, 0)
    mem = node.nonzero.get(MEMORY, 0) + task.nonzero.get(MEMORY, 0)
    if cpu >= cpu_cap or mem >= mem_cap:
        return 0
    whole = cpu_cap * mem_cap
    return (whole - abs(cpu * mem_cap - mem * cpu_cap)) * MAX_SCORE // whole


class NodeOrderPlugin:
    name = "nodeorder"

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.least_weight = int(arguments.get("leastrequested.weight", 1))
        self.balanced_weight = int(arguments.get("balancedresource.weight", 1))

    def on_open(self, ssn: Session) -> None:
        # scores depend on the task's cpu and memory and the node's state (its version)
        cache: dict[tuple[int, int, str], tuple[int, int]] = {}

        def score(task: TaskInfo, node: NodeInfo) -> int:
            key = (task.nonzero.get(CPU, 0), task.nonzero.get(MEMORY, 0), node.name)
            hit = cache.get(key)
            if hit is not None and hit[0] == node.version:
                return hit[1]
            value = self.least_weight * least_requested(task, node) + (
                self.balanced_weight * balanced_resource(task, node)
            )
            cache[key] = (node.version, value)
            return value

        ssn.register(self.name, "NodeOrder", score)

    def on_close(self, ssn: Session) -> None:
        pass
