"""One scheduling cycle's state, the plugins' hooks over it, and statements.

Plugins register hooks by name at ``on_open``; the session combines them walking the tiers and
plugins in configuration order, honouring each plugin's disabled hooks. Only the
session changes task and node state (``allocate``/``deallocate``/``evict``), and it tells the
plugins' event handlers (drf and proportion keep shares current) each time.

A ``Statement`` records allocations, pipelinings and evictions against the session at once and
either commits them (evictions carried out, allocations bound through the ``Writer``) or
discards them in reverse order, remembering each undone task's last transaction for the
messages of :mod:`.status`. The session never talks to the API server itself: the ``Writer`` does.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from localcluster.batchscheduler.api import (
    JobInfo,
    NodeInfo,
    QueueInfo,
    Resources,
    TaskInfo,
    TaskStatus,
    add,
)
from localcluster.batchscheduler.conf import SchedulerConf
from localcluster.batchscheduler.feasibility import Feasibility
from localcluster.batchscheduler.flavours import Flavour
from localcluster.batchscheduler.ranking import NodeRanking

logger = logging.getLogger(__name__)

Handler = Callable[[TaskInfo], None]
MALFORMED = "pod cannot be evaluated"


class Writer(Protocol):
    """What a session needs carried out in the cluster (the cache implements it)."""

    def bind(self, tasks: list[TaskInfo]) -> set[str]:
        """Bind every task to its ``node``; returns the keys that could not be bound."""
        ...

    def evict(self, task: TaskInfo, reason: str) -> bool:
        """Delete the pod (graceful); False when it could not be evicted."""
        ...

    def job_event(self, job: JobInfo, event_type: str, reason: str, message: str) -> None: ...


@dataclass
class CycleSummary:
    """What one ``run_once`` did, for tests and logs."""

    session: str = ""
    bound: dict[str, str] = field(default_factory=dict)  # pod key -> node
    evicted: list[str] = field(default_factory=list)
    pipelined: dict[str, str] = field(default_factory=dict)
    ready: dict[str, bool] = field(default_factory=dict)  # job id -> gang ready at close
    skipped_jobs: list[str] = field(default_factory=list)  # failed inside an action


def _fallback(left_created: str, left_name: str, right_created: str, right_name: str) -> int:
    """Creation time, then name (upstream: UID; names keep outcomes deterministic: difference 8)."""
    if (left_created, left_name) < (right_created, right_name):
        return -1
    return 1 if (left_created, left_name) > (right_created, right_name) else 0


class Session:
    """Jobs, nodes and queues of one cycle, with the plugins' hooks (see module docstring)."""

    def __init__(
        self,
        flavour: Flavour,
        conf: SchedulerConf,
        jobs: dict[str, JobInfo],
        nodes: dict[str, NodeInfo],
        queues: dict[str, QueueInfo],
        writer: Writer,
        now: str = "",
    ) -> None:
        self.uid = str(uuid.uuid4())
        self.flavour = flavour
        self.conf = conf
        self.jobs = jobs
        self.nodes = dict(sorted(nodes.items()))
        self.node_list = list(self.nodes.values())
        self.queues = queues
        self.writer = writer
        self.now = now
        self.total: Resources = {}
        for node in self.node_list:
            add(self.total, node.allocatable)
        self.summary = CycleSummary(session=self.uid)
        self.malformed: dict[str, str] = {}  # pod key -> why it cannot be evaluated
        self.node_changes: list[str] = []  # names of nodes whose state changed, in order
        # memos kept current from node_changes: by task shape, and by task requests
        self.feasibility: dict[tuple[Any, ...], Feasibility] = {}
        self.rankings: dict[tuple[Any, ...], NodeRanking] = {}
        self._hooks: dict[str, dict[str, Callable[..., Any]]] = defaultdict(dict)
        self._chains: dict[str, list[Callable[..., Any]]] = {}
        self._on_allocate: list[Handler] = []
        self._on_deallocate: list[Handler] = []

    # -- registration ------------------------------------------------------------------

    def register(self, plugin: str, hook: str, fn: Callable[..., Any]) -> None:
        self._hooks[hook][plugin] = fn
        self._chains.pop(hook, None)

    def add_event_handler(self, allocate: Handler, deallocate: Handler) -> None:
        self._on_allocate.append(allocate)
        self._on_deallocate.append(deallocate)

    def _walk(self, hook: str) -> list[Callable[..., Any]]:
        """The hook's functions in tier and plugin order (computed once per hook)."""
        chain = self._chains.get(hook)
        if chain is None:
            registered = self._hooks.get(hook) or {}
            chain = [
                registered[option.name]
                for tier in self.conf.tiers
                for option in tier
                if option.name in registered and option.enabled(hook)
            ]
            self._chains[hook] = chain
        return chain

    # -- combined hooks ------------------------------------------------------------------

    def _compare(self, hook: str, left: Any, right: Any) -> int:
        for fn in self._walk(hook):
            answer = fn(left, right)
            if answer:
                return cast(int, answer)
        return 0

    def job_cmp(self, left: JobInfo, right: JobInfo) -> int:
        return self._compare("JobOrder", left, right) or _fallback(
            left.created, left.uid, right.created, right.uid
        )

    def queue_cmp(self, left: QueueInfo, right: QueueInfo) -> int:
        return self._compare("QueueOrder", left, right) or _fallback(
            left.created, left.name, right.created, right.name
        )

    def task_cmp(self, left: TaskInfo, right: TaskInfo) -> int:
        return self._compare("TaskOrder", left, right) or _fallback(
            left.created, left.key, right.created, right.key
        )

    @functools.cached_property
    def job_key(self) -> Callable[[JobInfo], Any]:
        return functools.cmp_to_key(self.job_cmp)

    @functools.cached_property
    def queue_key(self) -> Callable[[QueueInfo], Any]:
        return functools.cmp_to_key(self.queue_cmp)

    @functools.cached_property
    def task_key(self) -> Callable[[TaskInfo], Any]:
        return functools.cmp_to_key(self.task_cmp)

    def predicate(self, task: TaskInfo, node: NodeInfo) -> list[str]:
        """The first failing plugin's reasons; empty when every plugin passes. A task the
        predicates cannot evaluate (malformed selector or affinity) fits nowhere and is
        reported as malformed at close."""
        if task.key in self.malformed:
            return [MALFORMED]
        try:
            for fn in self._walk("Predicate"):
                reasons = fn(task, node)
                if reasons:
                    return cast(list[str], reasons)
        except Exception as err:  # noqa: BLE001 - bad pod data, not a scheduler failure
            logger.warning("%s: cannot evaluate %s: %s", self.flavour.name, task.key, err)
            self.malformed[task.key] = f"cannot evaluate pod: {err}"
            return [MALFORMED]
        return []

    @functools.cached_property
    def node_score(self) -> Callable[[TaskInfo, NodeInfo], int]:
        """Sum of the NodeOrder hooks (fixed once the plugins have opened)."""
        fns = self._walk("NodeOrder")
        if len(fns) == 1:
            return fns[0]
        return lambda task, node: sum(fn(task, node) for fn in fns)

    def job_ready(self, job: JobInfo) -> bool:
        return all(fn(job) for fn in self._walk("JobReady"))

    def job_pipelined(self, job: JobInfo) -> bool:
        return all(fn(job) for fn in self._walk("JobPipelined"))

    def job_valid(self, job: JobInfo) -> tuple[str, str] | None:
        for fn in self._walk("JobValid"):
            result = fn(job)
            if result is not None:
                return cast(tuple[str, str] | None, result)
        return None

    def overused(self, queue: QueueInfo) -> bool:
        return any(fn(queue) for fn in self._walk("Overused"))

    def victims(self, hook: str, actor: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
        """``Preemptable``/``Reclaimable``: the first tier with a plugin holding the hook
        decides, by the intersection of its plugins' answers (possibly empty)."""
        registered = self._hooks.get(hook) or {}
        for tier in self.conf.tiers:
            answers = [
                registered[o.name](actor, candidates)
                for o in tier
                if o.name in registered and o.enabled(hook)
            ]
            if answers:
                keys = set.intersection(*({t.key for t in answer} for answer in answers))
                return [t for t in candidates if t.key in keys]
        return []

    # -- state changes -------------------------------------------------------------------

    def allocate(self, task: TaskInfo, node_name: str, status: TaskStatus) -> None:
        """Place a Pending task on a node as Allocated or Pipelined."""
        self.jobs[task.job].set_status(task, status)
        task.node = node_name
        self.nodes[node_name].add_task(task)
        self.node_changes.append(node_name)
        for handler in self._on_allocate:
            handler(task)

    def deallocate(self, task: TaskInfo) -> None:
        """Undo ``allocate``; the task remembers what it was for its message."""
        node = self.nodes[task.node or ""]
        task.last_transaction = (task.status, node.name)
        node.remove_task(task)
        self.node_changes.append(node.name)
        self.jobs[task.job].set_status(task, TaskStatus.PENDING)
        task.node = None
        for handler in self._on_deallocate:
            handler(task)

    def evict(self, task: TaskInfo) -> TaskStatus:
        """Mark a placed task Releasing; returns its previous status for ``unevict``."""
        previous = task.status
        self.jobs[task.job].set_status(task, TaskStatus.RELEASING)
        self.nodes[task.node or ""].start_releasing(task)
        self.node_changes.append(task.node or "")
        for handler in self._on_deallocate:
            handler(task)
        return previous

    def unevict(self, task: TaskInfo, previous: TaskStatus) -> None:
        self.nodes[task.node or ""].stop_releasing(task)
        self.node_changes.append(task.node or "")
        self.jobs[task.job].set_status(task, previous)
        for handler in self._on_allocate:
            handler(task)

    def bind(self, tasks: list[TaskInfo]) -> None:
        """Bind allocated tasks through the writer; tasks that could not be bound go back to
        Pending (the ledger found them no longer fitting, or the API said no)."""
        if not tasks:
            return
        failed = self.writer.bind(tasks)
        for task in tasks:
            if task.key in failed:
                self.deallocate(task)
            else:
                self.jobs[task.job].set_status(task, TaskStatus.BINDING)
                self.summary.bound[task.key] = task.node or ""


class Statement:
    """Operations recorded against the session, then committed or discarded as one."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._ops: list[tuple[str, TaskInfo, Any]] = []

    def allocate(self, task: TaskInfo, node_name: str) -> None:
        self.session.allocate(task, node_name, TaskStatus.ALLOCATED)
        self._ops.append(("allocate", task, node_name))

    def pipeline(self, task: TaskInfo, node_name: str) -> None:
        self.session.allocate(task, node_name, TaskStatus.PIPELINED)
        self._ops.append(("pipeline", task, node_name))

    def evict(self, task: TaskInfo, reason: str) -> None:
        previous = self.session.evict(task)
        self._ops.append(("evict", task, (reason, previous)))

    def __len__(self) -> int:
        return len(self._ops)

    def discard(self) -> None:
        for op, task, arg in reversed(self._ops):
            if op == "evict":
                self.session.unevict(task, arg[1])
            else:
                self.session.deallocate(task)
        self._ops = []

    def commit(self) -> None:
        """Evictions are carried out, allocations bound; pipelined tasks stay session-only."""
        session = self.session
        for op, task, arg in self._ops:
            if op == "evict":
                if session.writer.evict(task, arg[0]):
                    session.summary.evicted.append(task.key)
                    session.writer.job_event(session.jobs[task.job], "Normal", "Evict", arg[0])
                else:
                    session.unevict(task, arg[1])
            elif op == "pipeline":
                session.summary.pipelined[task.key] = task.node or ""
        allocated = [
            t for op, t, _ in self._ops if op == "allocate" and t.status == TaskStatus.ALLOCATED
        ]
        session.bind(allocated)
        self._ops = []
