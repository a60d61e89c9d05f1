"""PodGroup phase and conditions, pod conditions, and the exact upstream message texts.

Pure functions of a closed session's ``JobInfo``: nothing here talks to the API server. The
texts are upstream's, character for character:

- kube-batch v0.4.2 ``JobInfo.FitError``: ``0/2 nodes are available, 2 insufficient cpu.``
- Volcano v1.8 ``JobInfo.FitError``: ``pod group is not ready, 3 Pending, 3 minAvailable;
  Pending: 1 Unschedulable, 2 Schedulable``
- Volcano ``FitErrors.Error``: ``0/2 nodes are unavailable: 2 Insufficient cpu.``
- both: ``<u>/<t> tasks in gang unschedulable: <fit text>`` for the condition and the event.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from localcluster.batchscheduler.api import (
    ALLOCATED_LIKE,
    CPU,
    GPU,
    MEMORY,
    JobInfo,
    TaskInfo,
    TaskStatus,
)

REASON_SCHEDULABLE = "Schedulable"
REASON_UNSCHEDULABLE = "Unschedulable"
ALL_NODES_UNAVAILABLE = "all nodes are unavailable"
POD_GROUP_READY = "pod group is ready"
# kube-batch's FitError names only these dimensions, with its own spelling of the GPU.
_KUBE_BATCH_DIMENSIONS = {CPU: "cpu", MEMORY: "memory", GPU: "GPU"}


def _histogram(counts: Counter[str]) -> str:
    return ", ".join(sorted(f"{count} {reason}" for reason, count in counts.items()))


def kube_batch_fit_text(job: JobInfo) -> str:
    """Nodes that passed the predicates but lacked room for the last task that found none."""
    if not job.fit_delta:
        return "0 nodes are available"
    counts: Counter[str] = Counter()
    for short in job.fit_delta.values():
        counts.update(_KUBE_BATCH_DIMENSIONS[n] for n in short if n in _KUBE_BATCH_DIMENSIONS)
    parts = sorted(f"{count} insufficient {name}" for name, count in counts.items())
    return f"0/{len(job.fit_delta)} nodes are available, {', '.join(parts)}."


def node_errors_text(errors: dict[str, list[str]]) -> str:
    """Volcano's text for one task's per-node failures."""
    counts: Counter[str] = Counter()
    for reasons in errors.values():
        counts.update(reasons)
    head = f"0/{len(errors)} nodes are unavailable"
    return f"{head}: {_histogram(counts)}." if errors else head


def task_reason(job: JobInfo, task: TaskInfo) -> tuple[str, str]:
    """Volcano's (reason, message) for a task left unscheduled at close (computed once per
    task; the gang message, written last, is looked up at each call)."""
    if task.key not in job.reasons:
        job.reasons[task.key] = _task_reason(job, task)
    reason, message = job.reasons[task.key]
    return reason, message if message is not None else job.fit_message or ALL_NODES_UNAVAILABLE


def _task_reason(job: JobInfo, task: TaskInfo) -> tuple[str, str | None]:
    status, node = task.last_transaction or (task.status, task.node or "")
    prefix = f"Pod {task.namespace}/{task.name} can possibly be assigned to {node}"
    if status == TaskStatus.ALLOCATED:
        return REASON_SCHEDULABLE, prefix
    if status == TaskStatus.PIPELINED:
        return REASON_UNSCHEDULABLE, prefix + ", once resource is released"
    errors = job.fit_errors.get(task.key)
    if errors is not None:
        return REASON_UNSCHEDULABLE, node_errors_text(errors)
    return REASON_UNSCHEDULABLE, None


def volcano_fit_text(job: JobInfo) -> str:
    statuses: Counter[str] = Counter(
        {s.value: len(tasks) for s, tasks in job.by_status.items() if tasks}
    )
    statuses["minAvailable"] = job.min_member
    text = f"pod group is not ready, {_histogram(statuses)}"
    pending = job.with_status(TaskStatus.PENDING)
    if pending:
        reasons = Counter(task_reason(job, t)[0] for t in pending)
        text += f"; Pending: {_histogram(reasons)}"
    return text


def fit_text(job: JobInfo, volcano: bool) -> str:
    return volcano_fit_text(job) if volcano else kube_batch_fit_text(job)


def allocated_this_cycle(job: JobInfo, volcano: bool) -> int:
    """Pending tasks whose last transaction this session placed them (undone since): Volcano
    counts allocations, kube-batch (which kept them) pipelinings too."""
    placed = (TaskStatus.ALLOCATED,) if volcano else (TaskStatus.ALLOCATED, TaskStatus.PIPELINED)
    return sum(
        1
        for t in job.with_status(TaskStatus.PENDING)
        if t.last_transaction and t.last_transaction[0] in placed
    )


def unschedulable_message(job: JobInfo, volcano: bool) -> str:
    unready = job.min_member - (job.ready_count() + allocated_this_cycle(job, volcano))
    return f"{unready}/{len(job.tasks)} tasks in gang unschedulable: {fit_text(job, volcano)}"


def event_message(job: JobInfo, volcano: bool) -> str:
    """The Warning event's text: #Pending tasks (kube-batch: minus those upstream still held)."""
    pending = job.count(TaskStatus.PENDING)
    if not volcano:
        pending -= allocated_this_cycle(job, volcano)
    return f"{pending}/{len(job.tasks)} tasks in gang unschedulable: {fit_text(job, volcano)}"


def set_condition(job: JobInfo, condition: dict[str, Any], session_uid: str, now: str) -> None:
    """Replace the condition of the same type; keep transitionID/time when nothing changed."""
    for index, current in enumerate(job.conditions):
        if current.get("type") != condition["type"]:
            continue
        same = all(current.get(k) == condition[k] for k in ("status", "reason", "message"))
        if not same:
            job.conditions[index] = {
                **condition,
                "transitionID": session_uid,
                "lastTransitionTime": now,
            }
        return
    job.conditions.append({**condition, "transitionID": session_uid, "lastTransitionTime": now})


def phase_of(job: JobInfo, volcano: bool) -> str:
    """PodGroup phase at close (>= minMember, Succeeded counted: difference 4)."""
    if job.count(TaskStatus.RUNNING) and job.unschedulable:
        return "Unknown"
    scheduled = job.count(*ALLOCATED_LIKE, TaskStatus.SUCCEEDED)
    if scheduled >= job.min_member:
        if volcano and scheduled == job.count(TaskStatus.SUCCEEDED):
            return "Completed"
        return "Running"
    if volcano and job.phase == "Inqueue":
        return "Inqueue"
    return "Pending"


def podgroup_status(job: JobInfo, volcano: bool) -> dict[str, Any]:
    """The status to write for ``job`` (phase already settled by the caller)."""
    status: dict[str, Any] = {"phase": job.phase}
    if job.conditions:
        status["conditions"] = job.conditions
    for field, task_status in (
        ("running", TaskStatus.RUNNING),
        ("succeeded", TaskStatus.SUCCEEDED),
        ("failed", TaskStatus.FAILED),
    ):
        count = job.count(task_status)
        if count:
            status[field] = count
    return status


def _comparable(status: dict[str, Any]) -> dict[str, Any]:
    conditions = [
        {k: v for k, v in c.items() if k not in ("transitionID", "lastTransitionTime")}
        for c in status.get("conditions") or []
    ]
    return {
        "phase": status.get("phase"),
        "conditions": conditions,
        **{k: status.get(k) or 0 for k in ("running", "succeeded", "failed")},
    }


def status_changed(new: dict[str, Any], old: dict[str, Any] | None) -> bool:
    """Phase, counters or a condition differ (transition IDs and times ignored)."""
    return _comparable(new) != _comparable(old or {})
