"""What the controller remembers about each job between syncs, behind one lock.

The work queue never hands one key to two workers, but the maps here are shared by every
worker (and by the deletion path), so each read-modify-write holds the lock. Only facts that
may be lost on a restart live here: which jobs this process has seen (so ``jobs_deleted``
counts a job once, divergence D5), which exit codes were already announced (divergence
D31), which jobs this process saw finished (so a pass on a cache that has not yet seen the
finishing status write creates nothing, divergence D39), which ignored edits of finished jobs
were announced, the last Unschedulable message of each job's PodGroup (divergence D40),
why its pods wait for that group (D62) and why the API server refused its last creates (D157),
and the job's last status write until the informer delivers it: a pass over the version that
write replaced would compute from a stale status and meet a 409 (an expectation on our own
write, as pods and services have theirs; divergence D47). It also knows which informer updates
need no pass (D97): the one showing our own status write when the pass that wrote it left
nothing that update would bring back, and the deletions of a finished job's pods and services
once a clean pass of its terminal branch has run. It keeps the last spec found valid, so that a
pass validates only a spec that differs from it. Anything that must survive a restart lives
in the job's status (divergence D11).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# How long a status write may stay unseen by the informer before syncs go ahead anyway
# (a relist delivers it at the latest; this only guards against a wedged job).
STATUS_WRITE_SEEN_TIMEOUT = 30.0


@dataclass
class _Job:
    uid: str
    reported_exits: set[tuple[str, int]] = field(default_factory=set)
    finished: bool = False
    ignored_edit: str = ""  # the last announced ignored edit of a job that cannot run it
    unschedulable: str = ""  # the last surfaced Unschedulable message of its PodGroup
    gang_wait: str = ""  # why its pods wait for its PodGroup, as last told ("": they do not)
    create_refusal: str = ""  # why the API server refused its last creates ("": it did not)
    # (resourceVersion the last status write replaced, when it was written)
    replaced_version: tuple[str, float] | None = None
    # the resourceVersion our last status write made, while its informer update needs no pass
    quiet_version: str = ""
    cleaned: bool = False  # a clean pass of the terminal branch ran last (D97)
    # the last spec decoded and found valid (the cache's, read-only) and its digest
    valid_spec: tuple[object, str] | None = None


class JobMemory:
    """Per-job facts of this process; thread-safe."""

    def __init__(self, monotonic: Callable[[], float] | None = None) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, _Job] = {}
        self._monotonic = monotonic or time.monotonic

    def remember(self, key: str, uid: str) -> None:
        """Note that the job ``key`` exists with ``uid``; a new uid starts afresh."""
        with self._lock:
            self._of(key, uid)

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

    def gang_wait_changed(self, key: str, uid: str, message: str) -> bool:
        """Remember why the job's pods wait for its PodGroup ("" when they do not); True when
        it differs from the last reason remembered."""
        return self._replace(key, uid, "gang_wait", message)

    def set_create_refusal(self, key: str, uid: str, message: str) -> None:
        """Remember why the API server refused the job's last batch of creates ("" once a
        batch went through): the next pass tells it on the job (D157)."""
        self._replace(key, uid, "create_refusal", message)

    def create_refusal(self, key: str, uid: str) -> str:
        with self._lock:
            return self._of(key, uid).create_refusal

    def _replace(self, key: str, uid: str, fact: str, message: str) -> bool:
        """Set one remembered message of the job; True when it changed."""
        with self._lock:
            job = self._of(key, uid)
            if getattr(job, fact) == message:
                return False
            setattr(job, fact, message)
            return True

    def status_written(
        self, key: str, replaced_version: str, written_version: str = "", quiet: bool = False
    ) -> None:
        """Our status write replaced ``replaced_version`` of job ``key`` with
        ``written_version``; ``quiet``: the informer's update showing it needs no pass."""
        with self._lock:
            job = self._jobs.setdefault(key, _Job(""))
            job.replaced_version = (replaced_version, self._monotonic())
            job.quiet_version = written_version if quiet else ""

    def quiet_update(self, key: str, version: str) -> bool:
        """True (once) when ``version`` of job ``key`` is our own quiet status write."""
        with self._lock:
            job = self._jobs.get(key)
            if job is None or not version or job.quiet_version != version:
                return False
            job.quiet_version = ""
            return True

    def set_cleaned(self, key: str, uid: str, cleaned: bool) -> None:
        """Whether a clean pass of the terminal branch ran last for job ``key`` (``uid``)."""
        with self._lock:
            self._of(key, uid).cleaned = cleaned

    def is_cleaned(self, key: str, uid: str) -> bool:
        with self._lock:
            job = self._jobs.get(key)
            return job is not None and job.uid == uid and job.cleaned

    def validated_spec(self, key: str, uid: str, spec: object) -> str | None:
        """The digest of job ``key``'s ``spec`` when this process found an equal spec of it
        valid (validity depends on the name and the spec alone), else None. The remembered
        spec becomes ``spec``: only the cache's newest copy stays referenced."""
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.uid != uid or job.valid_spec is None:
                return None
            known, digest = job.valid_spec
            if known is not spec and known != spec:
                return None
            job.valid_spec = (spec, digest)
            return digest

    def spec_validated(self, key: str, uid: str, spec: object, digest: str) -> None:
        """Remember that job ``key``'s ``spec`` (its digest ``digest``) is valid."""
        with self._lock:
            self._of(key, uid).valid_spec = (spec, digest)

    def last_valid_spec(self, key: str, uid: str) -> tuple[object, str] | None:
        """The last spec of job ``key`` this process found valid, and its digest (kept while
        an invalid edit is ignored: the job runs on it)."""
        with self._lock:
            job = self._jobs.get(key)
            return job.valid_spec if job is not None and job.uid == uid else None

    def cache_behind_own_write(self, key: str, cached_version: str) -> bool:
        """True while the cache still holds the version our last status write replaced."""
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.replaced_version is None:
                return False
            version, written = job.replaced_version
            if version == cached_version and (
                self._monotonic() - written < STATUS_WRITE_SEEN_TIMEOUT
            ):
                job.quiet_version = ""  # a pass waits for the write: its update brings it back
                return True
            job.replaced_version = None
            return False
