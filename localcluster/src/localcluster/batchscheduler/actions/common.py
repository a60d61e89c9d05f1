"""What several actions share: node feasibility (with the error cache), node choice, and the
victim-first order of eviction candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from localcluster.batchscheduler.api import NodeInfo, TaskInfo, short_of
from localcluster.batchscheduler.errcache import PredicateErrorCache

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session


def feasible_nodes(
    ssn: Session, task: TaskInfo, cache: PredicateErrorCache, with_resources: bool
) -> tuple[list[NodeInfo], dict[str, list[str]]]:
    """Nodes that pass the predicates (and, when ``with_resources``, have future room first,
    as Volcano checks it), plus the reasons of the others by node name."""
    known = cache.known_failures(task)
    feasible: list[NodeInfo] = []
    errors: dict[str, list[str]] = {}
    for node in ssn.node_list:
        reasons = known.get(node.name)
        if reasons is None:
            reasons = []
            if with_resources:
                short = short_of(task.init_resreq, node.future_idle)
                if short:  # Volcano names only the first short resource
                    reasons = [f"Insufficient {short[0]}"]
            if not reasons:
                reasons = ssn.predicate(task, node)
            if reasons:
                cache.record(task, node.name, reasons)
        if reasons:
            errors[node.name] = reasons
        else:
            feasible.append(node)
    return feasible, errors


def by_score(ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> list[NodeInfo]:
    """Best first: highest node-order score, ties to the smallest name (§11 #8)."""
    if len(nodes) <= 1:
        return list(nodes)
    return sorted(nodes, key=lambda n: (-ssn.node_score(task, n), n.name))


def victim_first(tasks: list[TaskInfo]) -> list[TaskInfo]:
    """Lowest priority first, then the newest, then by name descending."""
    ordered = sorted(tasks, key=lambda t: (t.created, t.key), reverse=True)
    return sorted(ordered, key=lambda t: t.priority)
