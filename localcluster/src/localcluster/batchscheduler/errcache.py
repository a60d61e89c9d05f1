"""Volcano's predicate error cache, in three modes (``off``, ``task-spec``, ``task-spec-nonempty``).

Within one job's turn in one allocate pass, a task's per-node failures are stored under
``"<job id>/<task-spec>"``; a later task with the same key is rejected on every stored node
with the stored reasons, without being evaluated. Right for identical replicas, wrong when
two tasks of one key differ (volcano-sh/volcano#2937: a TFJob's master and workers without
``volcano.sh/task-spec`` share the key ``"<job>/"``).

- ``off``: never used (kube-batch; Volcano before 1.5).
- ``task-spec``: always used (Volcano 1.5.0 - 1.10.x, the bug).
- ``task-spec-nonempty``: used only for tasks with a non-empty task-spec (Volcano >= 1.11).
"""

from __future__ import annotations

import logging

from localcluster.batchscheduler.api import TaskInfo

logger = logging.getLogger(__name__)


class PredicateErrorCache:
    """Failures of one job's turn, by task group key (see module docstring)."""

    def __init__(self, mode: str, job_uid: str) -> None:
        self.mode = mode
        self.job_uid = job_uid
        self._errors: dict[str, dict[str, list[str]]] = {}

    def key(self, task: TaskInfo) -> str | None:
        if self.mode == "off" or (self.mode == "task-spec-nonempty" and not task.task_spec):
            return None
        return f"{self.job_uid}/{task.task_spec}"

    def known_failures(self, task: TaskInfo) -> dict[str, list[str]]:
        """Stored failures that apply to ``task`` (a copy taken before it is evaluated, as
        upstream decides 'failed before' once per task)."""
        key = self.key(task)
        known = dict(self._errors.get(key, {})) if key is not None else {}
        if known:
            logger.debug("error cache hit for %s under %r: %s", task.key, key, sorted(known))
        return known

    def record(self, task: TaskInfo, node: str, reasons: list[str]) -> None:
        key = self.key(task)
        if key is not None:
            self._errors.setdefault(key, {})[node] = reasons
