"""proportion: queues share the cluster by weight.

Each queue that has jobs *deserves* a part of the cluster, handed out in rounds by weight and
capped by what it requests. Queues with the lower allocated/deserved share go first; a queue
whose allocation covers its deserved part in every dimension is overused (allocate skips it);
a queue's running tasks may be reclaimed while it keeps at least its deserved part.

Two rules for handing out, by flavour, as upstream:
- kube-batch v0.4.2: a queue is met (and clamped to its request) as soon as its deserved part
  exceeds its request in any dimension; stop when nothing remains.
- Volcano v1.8: each round clamps deserved to the request per dimension; a queue is met when
  its request is covered in every dimension or its deserved part did not change; stop when
  nothing remains or nothing changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from localcluster.batchscheduler.api import (
    ALLOCATED_LIKE,
    ZERO,
    Amounts,
    QueueInfo,
    Resources,
    TaskInfo,
    TaskStatus,
    add,
    fits,
    share,
)

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

# Upper bound on hand-out rounds; every round meets at least one queue or hands out everything.
MAX_ROUNDS = 1000


@dataclass
class QueueAttr:
    name: str
    weight: int
    allocated: Resources = field(default_factory=dict)
    request: Resources = field(default_factory=dict)
    deserved: Amounts = field(default_factory=dict)
    share: float = 0.0


def _minimum(a: Amounts, b: Amounts) -> Amounts:
    return {n: min(a.get(n, ZERO), b.get(n, ZERO)) for n in set(a) | set(b)}


def _scaled(amounts: Amounts, factor: Fraction) -> Amounts:
    return {n: v * factor for n, v in amounts.items()}


def _empty(amounts: Amounts) -> bool:
    return all(v <= 0 for v in amounts.values())


def hand_out(attrs: dict[str, QueueAttr], total: Resources, volcano: bool) -> None:
    """Fill every attr's ``deserved`` from ``total`` (see module docstring)."""
    remaining: Amounts = dict(total)
    met: set[str] = set()
    for _ in range(MAX_ROUNDS):
        weight = sum(a.weight for a in attrs.values() if a.name not in met)
        if weight == 0:
            return
        handed: Amounts = {}
        for attr in attrs.values():
            if attr.name in met:
                continue
            old = dict(attr.deserved)
            add(attr.deserved, _scaled(remaining, Fraction(attr.weight, weight)))
            if volcano:
                attr.deserved = _minimum(attr.deserved, attr.request)
                if fits(attr.request, attr.deserved) or attr.deserved == old:
                    met.add(attr.name)
            elif not fits(attr.deserved, attr.request):
                attr.deserved = _minimum(attr.deserved, attr.request)
                met.add(attr.name)
            add(handed, attr.deserved)
            add(handed, old, -1)
        before = dict(remaining)
        add(remaining, handed, -1)
        if _empty(remaining) or (volcano and remaining == before):
            return


class ProportionPlugin:
    name = "proportion"

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments
        self.attrs: dict[str, QueueAttr] = {}

    def on_open(self, ssn: Session) -> None:
        for job in ssn.jobs.values():
            queue = ssn.queues[job.queue]
            attr = self.attrs.setdefault(job.queue, QueueAttr(queue.name, queue.weight))
            for task in job.with_status(*ALLOCATED_LIKE):
                add(attr.allocated, task.resreq)
                add(attr.request, task.resreq)
            for task in job.with_status(TaskStatus.PENDING):
                add(attr.request, task.resreq)
        hand_out(self.attrs, ssn.total, ssn.flavour.volcano)
        for attr in self.attrs.values():
            attr.share = share(attr.allocated, attr.deserved)

        def queue_order(left: QueueInfo, right: QueueInfo) -> int:
            lshare, rshare = self._share(left.name), self._share(right.name)
            return -1 if lshare < rshare else (1 if lshare > rshare else 0)

        def overused(queue: QueueInfo) -> bool:
            attr = self.attrs.get(queue.name)
            return attr is not None and fits(attr.deserved, attr.allocated)

        def reclaimable(_reclaimer: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
            left: dict[str, Resources] = {}
            victims = []
            for task in candidates:
                attr = self.attrs[ssn.jobs[task.job].queue]
                allocated = left.setdefault(attr.name, dict(attr.allocated))
                if not fits(task.resreq, allocated):
                    continue
                add(allocated, task.resreq, -1)
                if fits(attr.deserved, allocated):
                    victims.append(task)
            return victims

        def update(task: TaskInfo, sign: int) -> None:
            attr = self.attrs[ssn.jobs[task.job].queue]
            add(attr.allocated, task.resreq, sign)
            attr.share = share(attr.allocated, attr.deserved)

        ssn.register(self.name, "QueueOrder", queue_order)
        ssn.register(self.name, "Overused", overused)
        ssn.register(self.name, "Reclaimable", reclaimable)
        ssn.add_event_handler(lambda t: update(t, +1), lambda t: update(t, -1))

    def _share(self, queue: str) -> float:
        attr = self.attrs.get(queue)
        return attr.share if attr else 0.0

    def on_close(self, ssn: Session) -> None:
        self.attrs = {}
