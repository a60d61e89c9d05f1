"""What several actions share: node feasibility (with the error cache), node choice, and the
victim-first order of eviction candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from localcluster.batchscheduler.api import NodeInfo, TaskInfo, short_of
from localcluster.batchscheduler.errcache import PredicateErrorCache
from localcluster.batchscheduler.ranking import NodeRanking
from localcluster.batchscheduler.session import MALFORMED

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session


def feasible_nodes(
    ssn: Session, task: TaskInfo, cache: PredicateErrorCache, with_resources: bool
) -> tuple[list[NodeInfo], dict[str, list[str]], list[NodeInfo]]:
    """Nodes that pass the predicates (and, when ``with_resources``, have future room first,
    as Volcano checks it), the reasons of the others by node name, and the feasible nodes
    with idle room for the task now.

    Results are memoised per task shape (requests and placement rules) and node version, so
    the replicas of a gang, and gangs alike, are checked once per node change (this assumes,
    as every built-in predicate does, that a verdict depends only on those two).
    """
    known = cache.known_failures(task)
    memo = ssn.node_checks
    shape = (task.shape, task.placement, with_resources)
    request = task.init_resreq
    feasible: list[NodeInfo] = []
    idle: list[NodeInfo] = []
    errors: dict[str, list[str]] = {}
    for node in ssn.node_list:
        reasons = known.get(node.name)
        fits_idle = False
        if reasons is None:
            hit = memo.get((shape, node.name))
            if hit is not None and hit[0] == node.version:
                reasons, fits_idle = hit[1], hit[2]
            else:
                reasons = _check(ssn, task, node, with_resources)
                fits_idle = not reasons and node.fits_idle(request)
                if reasons != [MALFORMED]:  # a malformed pod is judged on its own
                    memo[(shape, node.name)] = (node.version, reasons, fits_idle)
            if reasons:
                cache.record(task, node.name, reasons)
        if reasons:
            errors[node.name] = reasons
        else:
            feasible.append(node)
            if fits_idle:
                idle.append(node)
    return feasible, errors, idle


def _check(ssn: Session, task: TaskInfo, node: NodeInfo, with_resources: bool) -> list[str]:
    if with_resources and not node.fits_future(task.init_resreq):
        # Volcano names only the first short resource
        return [f"Insufficient {short_of(task.init_resreq, node.future_idle)[0]}"]
    return ssn.predicate(task, node)


def _ranking(ssn: Session, task: TaskInfo) -> NodeRanking:
    key = task.request_shape
    ranking = ssn.rankings.get(key)
    if ranking is None:
        ranking = ssn.rankings[key] = NodeRanking(task, ssn.nodes, ssn.node_score, ssn.node_changes)
    return ranking


def by_score(ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> list[NodeInfo]:
    """Best first: highest node-order score, ties to the smallest name (§11 #8)."""
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
