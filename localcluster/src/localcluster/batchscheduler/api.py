"""The batch scheduler's object model: resources, tasks, jobs, nodes and queues of one session.

Mirrors kube-batch's ``pkg/scheduler/api`` (``TaskInfo``, ``JobInfo``, ``NodeInfo``,
``QueueInfo``), with two simplifications: a resource vector is a plain ``dict`` of exact
integers in milli-units (a quantity times 1000, rounded up as Kubernetes rounds sub-milli
values; no tolerances: difference 2; integers because a cycle compares them ~10^5 times), and
every object here is built fresh for each session from the cache, so a session may mutate it
freely.

Invariants: a task is indexed in its job under exactly its current status; a node's ``used``
counts every task placed on it (bound pods from the ledger plus this session's allocations),
``nonzero`` the same tasks' cpu and memory as scoring counts them (``TaskInfo.nonzero``),
``pipelined`` the tasks planned against resources still being released.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

Resources = dict[str, int]  # resource name -> milli-units
# Exact amounts that may be fractional (a queue's deserved share): proportion's vectors.
Amounts = dict[str, Any]

CPU, MEMORY, GPU = "cpu", "memory", "nvidia.com/gpu"
ZERO = 0
MILLI = 1000


def milli(value: Fraction) -> int:
    """A parsed quantity in milli-units, rounded up."""
    return math.ceil(value * MILLI)


def to_resources(amounts: dict[str, Fraction]) -> Resources:
    return {name: milli(value) for name, value in amounts.items() if name != "pods"}


# Upstream's default priority for a task whose pod names none (kube-batch api.NewTaskInfo).
DEFAULT_TASK_PRIORITY = 1


def add(target: Amounts, amounts: Mapping[str, Any], sign: int = 1) -> None:
    """``target += sign * amounts``, in place."""
    for name, value in amounts.items():
        target[name] = target.get(name, ZERO) + sign * value


def plus(a: Resources, b: Resources, sign: int = 1) -> Resources:
    out = dict(a)
    add(out, b, sign)
    return out


def fits(request: Mapping[str, Any], available: Mapping[str, Any]) -> bool:
    """Every dimension of ``request`` is at most the same dimension of ``available``."""
    return all(value <= available.get(name, ZERO) for name, value in request.items())


def short_of(request: Resources, available: Resources) -> list[str]:
    """The dimensions ``request`` exceeds, cpu and memory first, then the rest by name."""
    short = [n for n, v in request.items() if v > 0 and v > available.get(n, ZERO)]
    return sorted(short, key=lambda n: (n != CPU, n != MEMORY, n))


def is_empty(request: Resources) -> bool:
    return all(value == 0 for value in request.values())


def share(allocated: Resources, total: dict[str, Any]) -> float:
    """Dominant share: the largest allocated/total over the dimensions (0/0 = 0, x/0 = 1).
    A float, as upstream's: shares only order jobs and queues."""
    best = 0.0
    for name in set(allocated) | set(total):
        used, whole = allocated.get(name, ZERO), total.get(name, ZERO)
        if whole > 0:
            ratio = float(used) / float(whole)
        else:
            ratio = 1.0 if used > 0 else 0.0
        if ratio > best:
            best = ratio
    return best


class TaskStatus(enum.Enum):
    PENDING = "Pending"
    ALLOCATED = "Allocated"
    PIPELINED = "Pipelined"
    BINDING = "Binding"
    BOUND = "Bound"
    RUNNING = "Running"
    RELEASING = "Releasing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


ALLOCATED_LIKE = frozenset(
    {TaskStatus.ALLOCATED, TaskStatus.BINDING, TaskStatus.BOUND, TaskStatus.RUNNING}
)
# Statuses whose pods hold a node's resources.
ON_NODE = ALLOCATED_LIKE | {TaskStatus.RELEASING}


def task_status(pod: dict[str, Any]) -> TaskStatus:
    """A pod's status as the batch scheduler sees it."""
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    deleting = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    if phase in ("Pending", "Running") and deleting:
        return TaskStatus.RELEASING
    if phase == "Pending":
        return TaskStatus.BOUND if (pod.get("spec") or {}).get("nodeName") else TaskStatus.PENDING
    if phase == "Running":
        return TaskStatus.RUNNING
    if phase == "Succeeded":
        return TaskStatus.SUCCEEDED
    if phase == "Failed":
        return TaskStatus.FAILED
    return TaskStatus.UNKNOWN


@dataclass(eq=False)
class TaskInfo:
    """One pod of a job, as this session sees it."""

    key: str  # namespace/name
    name: str
    namespace: str
    job: str  # job id
    pod: dict[str, Any]
    resreq: Resources  # what the pod holds while it runs
    init_resreq: Resources  # what it needs to start (init containers included)
    # cpu and memory as scoring counts them (defaults for missing requests: nonzero_requests)
    nonzero: Resources
    status: TaskStatus
    node: str | None
    priority: int
    created: str
    task_spec: str  # volcano.sh/task-spec annotation, "" when absent
    preemptable: bool = True
    # where the pod may go, as one comparable value (node selector, node affinity, tolerations):
    # tasks with equal keys pass or fail the same static predicates on a node
    placement: str = ""
    # (status, node) of the last allocation undone in this session, for the pod's message
    last_transaction: tuple[TaskStatus, str] | None = None
    best_effort: bool = field(init=False)
    shape: tuple[Any, ...] = field(init=False)  # init_resreq as a hashable value
    score_shape: tuple[Any, ...] = field(init=False)  # nonzero as a hashable value

    def __post_init__(self) -> None:
        self.best_effort = is_empty(self.init_resreq)
        self.shape = tuple(sorted(self.init_resreq.items()))
        self.score_shape = tuple(sorted(self.nonzero.items()))


@dataclass(eq=False)
class JobInfo:
    """One PodGroup (or shadow group) and its tasks."""

    uid: str  # "<namespace>/<group name>", or the shadow group's owner
    namespace: str
    name: str
    min_member: int
    queue: str
    priority: int
    created: str
    podgroup: dict[str, Any] | None  # None for a shadow group: nothing is written about it
    # Volcano's spec.minTaskMember: volcano.sh/task-spec name -> minimum of that task
    min_task_member: dict[str, int] = field(default_factory=dict)
    phase: str = ""
    conditions: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, TaskInfo] = field(default_factory=dict)
    by_status: dict[TaskStatus, dict[str, TaskInfo]] = field(default_factory=dict)
    # volcano: per task key, node -> reasons; kube-batch: node -> short dimensions
    fit_errors: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    fit_delta: dict[str, list[str]] = field(default_factory=dict)
    unschedulable: bool = False  # gang wrote Unschedulable in this session
    fit_message: str = ""  # the gang condition message written in this session
    pending_best_effort: int = 0  # kept by add_task/set_status
    # status.task_reason per task key, at close
    reasons: dict[str, tuple[str, str | None]] = field(default_factory=dict)

    def add_task(self, task: TaskInfo) -> None:
        self.tasks[task.key] = task
        self.by_status.setdefault(task.status, {})[task.key] = task
        if task.status == TaskStatus.PENDING and task.best_effort:
            self.pending_best_effort += 1

    def set_status(self, task: TaskInfo, status: TaskStatus) -> None:
        if task.best_effort:
            self.pending_best_effort += (status == TaskStatus.PENDING) - (
                task.status == TaskStatus.PENDING
            )
        self.by_status.get(task.status, {}).pop(task.key, None)
        task.status = status
        self.by_status.setdefault(status, {})[task.key] = task

    def with_status(self, *statuses: TaskStatus) -> list[TaskInfo]:
        return [t for s in statuses for t in self.by_status.get(s, {}).values()]

    def count(self, *statuses: TaskStatus) -> int:
        by_status, total = self.by_status, 0
        for status in statuses:
            tasks = by_status.get(status)
            if tasks:
                total += len(tasks)
        return total

    def ready_count(self) -> int:
        """Allocated-like or Succeeded tasks, plus best-effort Pending ones (Volcano's rule:
        a replica without requests must not keep its gang from ever being ready)."""
        return self.count(*ALLOCATED_LIKE, TaskStatus.SUCCEEDED) + self.pending_best_effort

    def valid_count(self) -> int:
        return self.count(
            *ALLOCATED_LIKE, TaskStatus.SUCCEEDED, TaskStatus.PIPELINED, TaskStatus.PENDING
        )

    def task_minimums_apply(self) -> bool:
        """Volcano skips the per-task checks when minMember is below their sum (a PodGroup
        that asks for more per task than for the whole could never be ready)."""
        return bool(self.min_task_member) and self.min_member >= sum(self.min_task_member.values())

    def per_task(self, statuses: frozenset[TaskStatus]) -> dict[str, int]:
        """Tasks in ``statuses`` by task-spec name, best-effort Pending ones counted too when
        ``statuses`` holds neither Pending (they count as placed, as in ``ready_count``)."""
        counts: dict[str, int] = {}
        for status in statuses:
            for task in self.by_status.get(status, {}).values():
                counts[task.task_spec] = counts.get(task.task_spec, 0) + 1
        if TaskStatus.PENDING not in statuses:
            for task in self.by_status.get(TaskStatus.PENDING, {}).values():
                if task.best_effort:
                    counts[task.task_spec] = counts.get(task.task_spec, 0) + 1
        return counts

    def short_tasks(self, statuses: frozenset[TaskStatus]) -> list[str]:
        """The task-spec names whose count in ``statuses`` is below their minTaskMember
        (none when the minimums do not apply)."""
        if not self.task_minimums_apply():
            return []
        counts = self.per_task(statuses)
        return sorted(t for t, m in self.min_task_member.items() if counts.get(t, 0) < m)

    def is_pending_phase(self) -> bool:
        return self.phase in ("", "Pending")

    def allocated(self) -> Resources:
        total: Resources = {}
        for task in self.with_status(*ALLOCATED_LIKE):
            add(total, task.resreq)
        return total


@dataclass(eq=False)
class NodeInfo:
    """A node as a session sees it: allocatable, what is used, released and planned."""

    name: str
    node: dict[str, Any]
    allocatable: Resources
    used: Resources
    releasing: Resources
    max_pods: int | None
    pod_count: int
    nonzero: Resources = field(default_factory=dict)  # scoring's counterpart of ``used``
    pipelined: Resources = field(default_factory=dict)
    tasks: dict[str, TaskInfo] = field(default_factory=dict)  # this scheduler's tasks on it
    version: int = 0  # bumped on every change, so per-node results can be cached

    @property
    def idle(self) -> Resources:
        return plus(self.allocatable, self.used, -1)

    @property
    def future_idle(self) -> Resources:
        out = self.idle
        add(out, self.releasing)
        add(out, self.pipelined, -1)
        return out

    def fits_idle(self, request: Resources) -> bool:
        """``fits(request, self.idle)`` without building the vector (the hot path)."""
        alloc, used = self.allocatable, self.used
        for name, value in request.items():
            if value > alloc.get(name, 0) - used.get(name, 0):
                return False
        return True

    def fits_future(self, request: Resources) -> bool:
        """``fits(request, self.future_idle)`` without building the vector."""
        alloc, used, rel, pip = self.allocatable, self.used, self.releasing, self.pipelined
        for name, value in request.items():
            if value > alloc.get(name, 0) - used.get(name, 0) + rel.get(name, 0) - pip.get(name, 0):
                return False
        return True

    def add_task(self, task: TaskInfo) -> None:
        """Place ``task`` (status already set) on this node."""
        self.version += 1
        if task.status == TaskStatus.PIPELINED:
            add(self.pipelined, task.resreq)
        else:
            add(self.used, task.resreq)
            add(self.nonzero, task.nonzero)
            if task.status == TaskStatus.RELEASING:
                add(self.releasing, task.resreq)
        self.pod_count += 1
        self.tasks[task.key] = task

    def remove_task(self, task: TaskInfo) -> None:
        """Undo ``add_task`` for ``task`` in its current status."""
        self.version += 1
        if task.status == TaskStatus.PIPELINED:
            add(self.pipelined, task.resreq, -1)
        else:
            add(self.used, task.resreq, -1)
            add(self.nonzero, task.nonzero, -1)
            if task.status == TaskStatus.RELEASING:
                add(self.releasing, task.resreq, -1)
        self.pod_count -= 1
        self.tasks.pop(task.key, None)

    def start_releasing(self, task: TaskInfo) -> None:
        self.version += 1
        add(self.releasing, task.resreq)

    def stop_releasing(self, task: TaskInfo) -> None:
        self.version += 1
        add(self.releasing, task.resreq, -1)


@dataclass(eq=False)
class QueueInfo:
    name: str
    weight: int
    reclaimable: bool
    created: str
    capability: Resources | None = None
