"""Job informer handlers and the reporting of invalid jobs (v0.5.3 ``job.go``).

Handlers read metadata only and enqueue; the sync decodes the cached object once (D7). An
invalid job is reported once: one log line, one Warning ``Invalid<Kind>Spec`` event, and its
status replaced by one Failed condition carrying the validation error, written with the controller's client (D8). That Failed is final
like any other: a later fix is not run (one Warning says to recreate the job), and a later
different error changes nothing (:mod:`.edits`). Only a job whose spec was never valid comes
here: one that ran goes on from its last valid spec or keeps its final status (D39).
``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any, Generic

from tf_operator.apis.common.v1.types import CONDITION_TRUE, JOB_FAILED, JobCondition
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.kind import InvalidJobError, J, JobKind
from tf_operator.common.jobcontroller.memory import JobMemory
from tf_operator.common.jobcontroller.status import raw_conditions, raw_finished_conditions
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.util import EVENT_TYPE_WARNING
from tf_operator.k8s.cache import (
    KeyFuncError,
    ResourceEventHandlerFuncs,
    deletion_handling_meta_namespace_key_func,
)
from tf_operator.k8s.client import ResourceInterface, is_conflict
from tf_operator.k8s.objects import Obj, meta
from tf_operator.k8s.workqueue import Queue
from tf_operator.logger import logger_for_kind, logger_for_unstructured

# Attempts of the invalid-job status write against 409 Conflict.
INVALID_STATUS_ATTEMPTS = 3


class JobEventHandlers(Generic[J]):
    """Add/update/delete handlers of the job informer: log and enqueue, nothing more, except
    that a job gone drops what was kept for it (``forget``: its expectations above all) at
    once, as the ReplicaSet controller's delete handler does, and an update whose UID
    changed is that job's deletion and a new job's addition (D68): a job deleted and
    re-created under the same name while the informer relisted, or faster than a worker
    synced the key, must not wait for its predecessor's creates. The update showing our own
    status write is logged but queues nothing when ``quiet`` says the pass that wrote it left
    nothing for it (D97)."""

    def __init__(
        self,
        kind: JobKind[J],
        queue: Queue,
        forget: Callable[[str], None] = lambda _key: None,
        quiet: Callable[[str, str], bool] = lambda _key, _version: False,
    ) -> None:
        self._kind = kind
        self._queue = queue
        self._forget = forget
        self._quiet = quiet

    def event_handler(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(self.on_add, self.on_update, self.on_delete)

    def _key(self, obj: Any) -> str | None:
        try:
            return deletion_handling_meta_namespace_key_func(obj)
        except KeyFuncError:
            kind = self._kind.resource.kind
            logger_for_kind(kind).error("couldn't get key for %s object %r", kind, obj)
            return None

    def enqueue(self, obj: Any) -> None:
        key = self._key(obj)
        if key is not None:
            self._queue.add(key)

    def on_delete(self, obj: Any) -> None:
        key = self._key(obj)
        if key is None:
            return
        self._forget(key)
        self._queue.add(key)

    def on_add(self, obj: Obj, is_in_initial_list: bool = False) -> None:
        kind = self._kind.resource.kind
        logger_for_unstructured(obj, kind).info("%s %s is created.", kind, meta(obj).get("name"))
        self.enqueue(obj)

    def on_update(self, old: Obj, cur: Obj) -> None:
        if meta(cur).get("uid") != meta(old).get("uid"):
            kind = self._kind.resource.kind
            logger_for_unstructured(cur, kind).info(
                "%s %s was deleted and created again (uid %s, was %s)",
                kind,
                meta(cur).get("name"),
                meta(cur).get("uid"),
                meta(old).get("uid"),
            )
            self.on_delete(old)  # then the add: the key is queued for the new job
            return
        resync = meta(cur).get("resourceVersion") == meta(old).get("resourceVersion")
        if resync and raw_finished_conditions(cur):
            # A periodic resync of a finished job: v0.5.3 synced it again every 30 s, which
            # only rereads a job with nothing left to do (its TTL is waited for, D13; a failed
            # clean-up is requeued with backoff) and floods the queue (divergence D45).
            return
        kind = self._kind.resource.kind
        logger_for_kind(kind).info("Updating %s: %s", kind.lower(), meta(cur).get("name"))
        key = self._key(cur)
        if key is not None and not (
            not resync and self._quiet(key, str(meta(cur).get("resourceVersion", "")))
        ):
            self._queue.add(key)


class InvalidJobReporter(Generic[J]):
    """Reports an invalid job on the job itself; see the module docstring."""

    def __init__(
        self, kind: JobKind[J], jobs: ResourceInterface, recorder: EventRecorder, memory: JobMemory
    ) -> None:
        self._kind = kind
        self._jobs = jobs
        self._recorder = recorder
        self._memory = memory
        self.reason = f"Invalid{kind.resource.kind}Spec"

    def message(self, err: InvalidJobError) -> str:
        return f"Failed to marshal the object to {self._kind.resource.kind}; the spec is invalid: {err}"

    def _reported(self, raw: Obj, message: str) -> bool:
        """Whether the job's status already carries this Failed/Invalid<Kind>Spec condition."""
        return any(
            c.get("type") == JOB_FAILED
            and c.get("reason") == self.reason
            and c.get("message") == message
            for c in raw_conditions(raw)
        )

    def note_fixed(self, ctx: SyncContext[J]) -> None:
        """A job Failed as invalid now has a valid spec: it stays Failed (Succeeded and Failed
        are final); say once per process how to run the fixed spec."""
        status = ctx.job.status
        if not any(
            c.type == JOB_FAILED and c.reason == self.reason for c in status.conditions or []
        ):
            return
        kind = self._kind.resource.kind
        message = (
            f"{kind} {ctx.job.name} failed because its spec was invalid and Failed is final: "
            f"delete and recreate the {kind} to run the fixed spec"
        )
        if self._memory.first_ignored_edit(ctx.key, ctx.job.uid, message):
            ctx.logger.warning(message)
            ctx.event(EVENT_TYPE_WARNING, self.reason, message)

    def report(self, raw: Obj, err: InvalidJobError, now: datetime) -> None:
        """Event, condition and log line, unless this error is reported on the job already."""
        message = self.message(err)
        if self._reported(raw, message):
            return
        condition = JobCondition(JOB_FAILED, CONDITION_TRUE, self.reason, message, now, now)
        logger = logger_for_unstructured(raw, self._kind.resource.kind)
        if self._write(raw, {"conditions": [condition.to_dict()]}, logger):
            logger.warning(message)
            self._recorder.event(raw, EVENT_TYPE_WARNING, self.reason, message)

    def _write(self, raw: Obj, status: Obj, logger: logging.LoggerAdapter[logging.Logger]) -> bool:
        """Replace the whole status (as v0.5.3 did); False if not written or already there."""
        body = {**raw, "status": status}
        name, namespace = meta(raw).get("name", ""), meta(raw).get("namespace", "")
        message = status["conditions"][0]["message"]
        for attempt in range(1, INVALID_STATUS_ATTEMPTS + 1):
            try:
                if attempt > 1:  # after a 409: read the job again
                    body = self._jobs.get(name, namespace=namespace)
                    if self._reported(body, message):
                        return False  # an earlier pass reported it; our cache was behind
                    body["status"] = status
                self._jobs.update_status(body, namespace=namespace)
                return True
            except Exception as err:
                if not is_conflict(err) or attempt == INVALID_STATUS_ATTEMPTS:
                    logger.error("Could not update the %s: %s", self._kind.resource.kind, err)
                    return False
        return False
