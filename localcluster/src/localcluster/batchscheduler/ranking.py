"""Nodes ranked by score for one kind of task, kept current as the session changes nodes.

Scoring every feasible node for every task costs nodes x tasks calls of the NodeOrder hooks
(10^5 in a cycle of 1,000 pods on 100 nodes). A ranking scores each node once for a given
non-zero request vector (``TaskInfo.nonzero``), then re-scores only the nodes the session
changed since (its change log), so choosing a node costs a walk down a sorted list. This
assumes, as the built-in ``nodeorder`` does, that a node's score depends only on the task's
non-zero requests and the node's state.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Container
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from localcluster.batchscheduler.api import NodeInfo, TaskInfo

Entry = tuple[int, str]  # (-score, node name): best first, ties to the smallest name


class NodeRanking:
    """All of a session's nodes, best first for tasks whose non-zero requests are ``task``'s."""

    def __init__(
        self,
        task: TaskInfo,
        nodes: dict[str, NodeInfo],
        score: Callable[[TaskInfo, NodeInfo], int],
        changes: list[str],
    ) -> None:
        self._task, self._nodes, self._score, self._changes = task, nodes, score, changes
        self._entry: dict[str, Entry] = {n: (-score(task, node), n) for n, node in nodes.items()}
        self._order: list[Entry] = sorted(self._entry.values())
        self._seen = len(changes)

    def _refresh(self) -> None:
        if self._seen == len(self._changes):
            return
        for name in set(self._changes[self._seen :]):
            old = self._entry[name]
            del self._order[bisect_left(self._order, old)]
            new = (-self._score(self._task, self._nodes[name]), name)
            insort(self._order, new)
            self._entry[name] = new
        self._seen = len(self._changes)

    def best(self, allowed: Container[str]) -> str | None:
        """The best-ranked node among ``allowed``."""
        self._refresh()
        for _, name in self._order:
            if name in allowed:
                return name
        return None

    def ordered(self, allowed: Container[str]) -> list[str]:
        self._refresh()
        return [name for _, name in self._order if name in allowed]
