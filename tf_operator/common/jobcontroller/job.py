"""Job informer handlers and the reporting of invalid jobs (v0.5.3 ``job.go``).

Handlers read metadata only and enqueue; the sync decodes the cached object once (D7). An
invalid job is reported once per distinct error (so at most once per resourceVersion): one log
line, one Warning ``Invalid<Kind>Spec`` event, and its status replaced by one Failed condition
carrying the validation error, written with the controller's client (D8). Fixing the spec
clears that condition. Only a job whose spec was never valid comes here: one that ran goes on
from its last valid spec or keeps its final status (:mod:`.edits`, D39).
``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

import copy
import logging
from datetime import datetime
from typing import Any

from tf_operator.apis.common.v1.types import CONDITION_TRUE, JOB_FAILED, JobCondition, JobStatus
from tf_operator.common.jobcontroller.kind import InvalidJobError, JobKind
from tf_operator.common.jobcontroller.owned import unwrap_tombstone
from tf_operator.common.jobcontroller.util import job_key
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.util import EVENT_TYPE_WARNING
from tf_operator.k8s.cache import ResourceEventHandlerFuncs
from tf_operator.k8s.client import ResourceInterface, is_conflict
from tf_operator.k8s.objects import Obj, meta
from tf_operator.k8s.workqueue import Queue
from tf_operator.logger import logger_for_unstructured

log = logging.getLogger(__name__)

# Attempts of the invalid-job status write against 409 Conflict.
INVALID_STATUS_ATTEMPTS = 3


class JobEventHandlers:
    """Add/update/delete handlers of the job informer: log and enqueue, nothing more."""

    def __init__(self, kind: JobKind, queue: Queue) -> None:
        self._kind = kind
        self._queue = queue

    def event_handler(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(self.on_add, self.on_update, self.on_delete)

    def enqueue(self, obj: Any) -> None:
        key = None if isinstance(obj, dict) else getattr(obj, "key", None)
        if key is None:
            inner = unwrap_tombstone(obj)
            if inner is None:
                log.error("couldn't get key for %s object %r", self._kind.resource.kind, obj)
                return
            key = job_key(inner)
        self._queue.add(key)

    def on_add(self, obj: Obj, is_in_initial_list: bool = False) -> None:
        kind = self._kind.resource.kind
        logger_for_unstructured(obj, kind).info("%s %s is created.", kind, meta(obj).get("name"))
        self.enqueue(obj)

    def on_update(self, old: Obj, cur: Obj) -> None:
        log.info("Updating %s: %s", self._kind.resource.kind.lower(), meta(cur).get("name"))
        self.enqueue(cur)

    def on_delete(self, obj: Any) -> None:
        self.enqueue(obj)


class InvalidJobReporter:
    """Reports an invalid job on the job itself; see the module docstring."""

    def __init__(self, kind: JobKind, jobs: ResourceInterface, recorder: EventRecorder) -> None:
        self._kind = kind
        self._jobs = jobs
        self._recorder = recorder
        self.reason = f"Invalid{kind.resource.kind}Spec"

    def message(self, err: InvalidJobError) -> str:
        return f"Failed to marshal the object to {self._kind.resource.kind}; the spec is invalid: {err}"

    def invalid_condition(self, status: Any) -> Obj | None:
        """The Failed/Invalid<Kind>Spec condition of a raw status, if present."""
        conditions = status.get("conditions") if isinstance(status, dict) else None
        for cond in conditions or []:
            if (
                isinstance(cond, dict)
                and cond.get("type") == JOB_FAILED
                and cond.get("reason") == self.reason
            ):
                return cond
        return None

    def clear(self, status: JobStatus) -> None:
        """Drop the Failed/Invalid<Kind>Spec condition left from when the spec was invalid."""
        if status.conditions:
            status.conditions = [
                c
                for c in status.conditions
                if not (c.type == JOB_FAILED and c.reason == self.reason)
            ]

    def report(self, raw: Obj, err: InvalidJobError, now: datetime) -> None:
        """Event, condition and log line, unless this error is reported on the job already."""
        message = self.message(err)
        existing = self.invalid_condition(raw.get("status"))
        if existing is not None and existing.get("message") == message:
            return
        condition = JobCondition(JOB_FAILED, CONDITION_TRUE, self.reason, message, now, now)
        logger = logger_for_unstructured(raw, self._kind.resource.kind)
        if self._write(raw, {"conditions": [condition.to_dict()]}, logger):
            logger.warning(message)
            self._recorder.event(raw, EVENT_TYPE_WARNING, self.reason, message)

    def _write(self, raw: Obj, status: Obj, logger: logging.LoggerAdapter[logging.Logger]) -> bool:
        """Replace the whole status (as v0.5.3 did); False if not written or already there."""
        body = copy.deepcopy(raw)
        body["status"] = status
        name, namespace = meta(raw).get("name", ""), meta(raw).get("namespace", "")
        message = status["conditions"][0]["message"]
        kind = self._kind.resource.kind
        for attempt in range(1, INVALID_STATUS_ATTEMPTS + 1):
            try:
                self._jobs.update_status(body, namespace=namespace)
                return True
            except Exception as err:
                if not is_conflict(err) or attempt == INVALID_STATUS_ATTEMPTS:
                    logger.error("Could not update the %s: %s", kind, err)
                    return False
            try:
                body = self._jobs.get(name, namespace=namespace)
            except Exception as err:
                logger.error("Could not update the %s: %s", kind, err)
                return False
            reported = self.invalid_condition(body.get("status"))
            if reported is not None and reported.get("message") == message:
                return False  # an earlier pass reported it; our cache was behind
            body["status"] = status
        return False
