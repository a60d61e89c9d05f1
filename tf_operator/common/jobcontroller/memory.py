"""What the controller remembers about each job between syncs, behind one lock.

The work queue never hands one key to two workers, but the maps here are shared by every
worker (and by the deletion path), so each read-modify-write holds the lock. Only facts that
may be lost on a restart live here: which jobs this process has seen (so ``jobs_deleted``
counts a job once, divergence D5), which exit codes were already announced (divergence
D31), which jobs this process saw finished (so a pass on a cache that has not yet seen the
finishing status write creates nothing, divergence D39), which ignored edits of finished jobs
were announced, and the last Unschedulable message of each job's PodGroup (divergence D40).
Anything that must survive a restart lives in the job's status (divergence D11).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class _Job:
    uid: str
    reported_exits: set[tuple[str, int]] = field(default_factory=set)
    finished: bool = False
    ignored_edit: str = ""  # the last announced ignored edit of a job that cannot run it
    unschedulable: str = ""  # the last surfaced Unschedulable message of its PodGroup


class JobMemory:
    """Per-job facts of this process; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, _Job] = {}

    def remember(self, key: str, uid: str) -> None:
        """Note that the job ``key`` exists with ``uid``; a new uid starts afresh."""
        with self._lock:
            known = self._jobs.get(key)
            if known is None or known.uid != uid:
                self._jobs[key] = _Job(uid)

    def forget(self, key: str) -> bool:
        """Drop everything kept for ``key``; True if this process had seen the job."""
        with self._lock:
            return self._jobs.pop(key, None) is not None

    def first_report(self, key: str, pod_uid: str, exit_code: int) -> bool:
        """True the first time pod ``pod_uid`` of job ``key`` is seen with ``exit_code``."""
        with self._lock:
            job = self._jobs.setdefault(key, _Job(""))
            marker = (pod_uid, exit_code)
            if marker in job.reported_exits:
                return False
            job.reported_exits.add(marker)
            return True

    def _of(self, key: str, uid: str) -> _Job:
        """The record of job ``key`` with ``uid`` (a new uid starts afresh); hold the lock."""
        job = self._jobs.get(key)
        if job is None or job.uid != uid:
            job = self._jobs[key] = _Job(uid)
        return job

    def mark_finished(self, key: str, uid: str) -> None:
        """Note that this process saw job ``key`` (``uid``) Succeeded or Failed."""
        with self._lock:
            self._of(key, uid).finished = True

    def is_finished(self, key: str, uid: str) -> bool:
        with self._lock:
            job = self._jobs.get(key)
            return job is not None and job.uid == uid and job.finished

    def first_ignored_edit(self, key: str, uid: str, message: str) -> bool:
        """True unless ``message`` was the last ignored edit announced for the job."""
        return self._replace(key, uid, "ignored_edit", message)

    def unschedulable_changed(self, key: str, uid: str, message: str) -> bool:
        """Remember the job's PodGroup's Unschedulable message ("" when none); True when it
        differs from the last one remembered."""
        return self._replace(key, uid, "unschedulable", message)

    def _replace(self, key: str, uid: str, fact: str, message: str) -> bool:
        """Set one remembered message of the job; True when it changed."""
        with self._lock:
            job = self._of(key, uid)
            if getattr(job, fact) == message:
                return False
            setattr(job, fact, message)
            return True
