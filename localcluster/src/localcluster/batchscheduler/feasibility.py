"""Where one kind of task may go: a verdict per node, kept current as the session changes nodes.

A task's verdict on a node (the predicates' reasons, or for Volcano the missing resource, and
whether the node has idle room now) depends only on the task's requests and placement rules
and on the node's state. So the replicas of a gang, and gangs alike, share one
``Feasibility``: every node is judged once, and again only when the session's change log says
it changed. This is what keeps a cycle over 1,000 pods and 100 nodes far below 10^5 checks.

It sees the session only through the small ``Nodes`` protocol below, so ``session`` (which
keeps these memos) imports this module and not the other way round.
"""

from __future__ import annotations

from typing import Protocol

from localcluster.batchscheduler.api import NodeInfo, TaskInfo, short_of

Lists = tuple[list[NodeInfo], dict[str, list[str]], list[NodeInfo]]


class Nodes(Protocol):
    """What a verdict needs from the session: its nodes, their change log and the predicates."""

    nodes: dict[str, NodeInfo]
    node_list: list[NodeInfo]
    node_changes: list[str]  # names of nodes whose state changed, in order
    malformed: dict[str, str]  # pod key -> why the predicates cannot evaluate it

    def predicate(self, task: TaskInfo, node: NodeInfo) -> list[str]: ...


def check(ssn: Nodes, task: TaskInfo, node: NodeInfo, with_resources: bool) -> list[str]:
    """Why ``task`` cannot go to ``node`` (empty: it can), resources first when asked."""
    if with_resources and not node.fits_future(task.init_resreq):
        # Volcano names only the first short resource
        return [f"Insufficient {short_of(task.init_resreq, node.future_idle)[0]}"]
    return ssn.predicate(task, node)


class Feasibility:
    """Every node's verdict for tasks shaped like ``task`` (see module docstring)."""

    def __init__(self, ssn: Nodes, task: TaskInfo, with_resources: bool) -> None:
        self._ssn, self._task, self._with_resources = ssn, task, with_resources
        self._verdicts = {node.name: self._judge(node) for node in ssn.node_list}
        self._seen = len(ssn.node_changes)
        self._lists: Lists | None = None
        # the predicates could not even evaluate this shape: every such task is malformed
        self.malformed = ssn.malformed.get(task.key)

    def _judge(self, node: NodeInfo) -> tuple[list[str], bool]:
        reasons = check(self._ssn, self._task, node, self._with_resources)
        return reasons, not reasons and node.fits_idle(self._task.init_resreq)

    def lists(self) -> Lists:
        """(feasible nodes, reasons of the others by node, feasible nodes with idle room),
        in node name order. Shared: callers must not change them."""
        changes = self._ssn.node_changes
        if self._seen < len(changes):
            for name in set(changes[self._seen :]):
                self._verdicts[name] = self._judge(self._ssn.nodes[name])
            self._seen = len(changes)
            self._lists = None
        if self._lists is None:
            feasible: list[NodeInfo] = []
            idle: list[NodeInfo] = []
            errors: dict[str, list[str]] = {}
            for node in self._ssn.node_list:
                reasons, fits_idle = self._verdicts[node.name]
                if reasons:
                    errors[node.name] = reasons
                else:
                    feasible.append(node)
                    if fits_idle:
                        idle.append(node)
            self._lists = (feasible, errors, idle)
        return self._lists
