"""What several actions share: node feasibility (with the error cache), node choice, and the
victim-first order of eviction candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from localcluster.batchscheduler.api import NodeInfo, TaskInfo
from localcluster.batchscheduler.errcache import PredicateErrorCache
from localcluster.batchscheduler.feasibility import Feasibility
from localcluster.batchscheduler.ranking import NodeRanking

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session


def feasible_nodes(
    ssn: Session, task: TaskInfo, cache: PredicateErrorCache, with_resources: bool
) -> tuple[list[NodeInfo], dict[str, list[str]], list[NodeInfo]]:
    """Nodes that pass the predicates (and, when ``with_resources``, have future room first,
    as Volcano checks it), the reasons of the others by node name, and the feasible nodes with
    idle room for the task now. Nodes the error cache already failed for the task's group
    are rejected with the stored reasons; the rest of the failures are stored."""
    key = (task.shape, task.placement, with_resources)
    entry = ssn.feasibility.get(key)
    if entry is None:
        entry = ssn.feasibility[key] = Feasibility(ssn, task, with_resources)
    if entry.malformed:
        ssn.malformed.setdefault(task.key, entry.malformed)
    feasible, errors, idle = entry.lists()
    known = cache.known_failures(task)
    if known:
        errors = {**errors, **known}
        feasible = [n for n in feasible if n.name not in known]
        idle = [n for n in idle if n.name not in known]
    if cache.key(task) is not None:
        for name, reasons in errors.items():
            if name not in known:
                cache.record(task, name, reasons)
    return feasible, errors, idle


def _ranking(ssn: Session, task: TaskInfo) -> NodeRanking:
    key = task.score_shape
    ranking = ssn.rankings.get(key)
    if ranking is None:
        ranking = ssn.rankings[key] = NodeRanking(task, ssn.nodes, ssn.node_score, ssn.node_changes)
    return ranking


def by_score(ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> list[NodeInfo]:
    """Best first: highest node-order score, ties to the smallest name (difference 8)."""
    if len(nodes) <= 1:
        return list(nodes)
    names = _ranking(ssn, task).ordered({n.name for n in nodes})
    return [ssn.nodes[name] for name in names]


def best_node(ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> NodeInfo:
    """``by_score(...)[0]``, without scoring every node."""
    if len(nodes) == 1:
        return nodes[0]
    name = _ranking(ssn, task).best({n.name for n in nodes})
    return ssn.nodes[name or nodes[0].name]


def victim_first(tasks: list[TaskInfo]) -> list[TaskInfo]:
    """Lowest priority first, then the newest, then by name descending."""
    ordered = sorted(tasks, key=lambda t: (t.created, t.key), reverse=True)
    return sorted(ordered, key=lambda t: t.priority)
