"""TFJob events, invalid jobs, and the clean-up of finished jobs (v0.5.3 ``job.go``).

Handlers only enqueue keys; all decisions are taken in the sync, from the cache, so an event
can never be lost to a decode failure (v0.5.3 ignored updates where either side was invalid
and crashed when a queued key no longer decoded, spec §10 #7, #8). The update handler also
schedules a re-sync at the active deadline when ``activeDeadlineSeconds`` changes.

An invalid job gets a Warning ``InvalidTFJobSpec`` event and its status replaced by one Failed
condition whose message carries the validation error, written with the controller's own
client (v0.5.3 used a separate in-cluster client, spec §10 #10). This happens once per
distinct error; when the user fixes the spec, the next sync drops that condition and the job
runs normally.

Clean-up of a finished job (spec §5.10, §5.11): pods per ``cleanPodPolicy`` (and, with
``All``, every service, even when no pod is left: v0.5.3 leaked them, #18); after a limit
failure (deadline, backoff) every still-active pod is deleted whatever the policy (#17). With
``ttlSecondsAfterFinished`` the job is deleted when the TTL has passed since completion, and
re-examined exactly then otherwise (v0.5.3 spun on ``AddRateLimited``, #14).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from tf_operator.apis.common.v1.types import (
    CLEAN_POD_POLICY_ALL,
    CLEAN_POD_POLICY_RUNNING,
    CONDITION_TRUE,
    JOB_FAILED,
    JobCondition,
    JobStatus,
    truncate_time,
)
from tf_operator.apis.tensorflow.v1.constants import KIND
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.common.jobcontroller.limits import (
    seconds_until_deadline,
    seconds_until_ttl_expiry,
)
from tf_operator.common.jobcontroller.pod import unwrap_tombstone
from tf_operator.common.jobcontroller.util import job_key, meta
from tf_operator.control.util import EVENT_TYPE_WARNING
from tf_operator.controller.v1.tensorflow.context import ReconcileContext
from tf_operator.controller.v1.tensorflow.informer import InvalidTFJobError, decode_tfjob
from tf_operator.k8s.client import is_conflict, is_not_found
from tf_operator.logger import logger_for_job, logger_for_unstructured

log = logging.getLogger(__name__)

FAILED_MARSHAL_TFJOB_REASON = "InvalidTFJobSpec"
INVALID_SPEC_MESSAGE = "Failed to marshal the object to TFJob; the spec is invalid: {}"
# Attempts of the invalid-job status write against 409 Conflict.
INVALID_STATUS_ATTEMPTS = 3


def _is_active(pod: dict) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not meta(pod).get("deletionTimestamp")


def invalid_condition(status: dict | None) -> dict | None:
    """The Failed/InvalidTFJobSpec condition of a raw status, if present."""
    for cond in (status or {}).get("conditions") or []:
        if (
            isinstance(cond, dict)
            and cond.get("type") == JOB_FAILED
            and cond.get("reason") == FAILED_MARSHAL_TFJOB_REASON
        ):
            return cond
    return None


def clear_invalid_condition(status: JobStatus) -> None:
    """Drop a Failed/InvalidTFJobSpec condition left from when the spec was invalid."""
    if status.conditions:
        status.conditions = [
            c
            for c in status.conditions
            if not (c.type == JOB_FAILED and c.reason == FAILED_MARSHAL_TFJOB_REASON)
        ]


def total_replicas(job: TFJob) -> int:
    return sum((s.replicas or 0) for s in (job.spec.tf_replica_specs or {}).values() if s)


class JobMixin:
    """TFJob-level behaviour of :class:`TFController`."""

    # ---- informer handlers -----------------------------------------------------------------

    def enqueue_tfjob(self, obj: Any) -> None:
        key = getattr(obj, "key", None) if not isinstance(obj, dict) else None
        if key is None:
            inner = unwrap_tombstone(obj)
            if inner is None:
                log.error("couldn't get key for tfjob object %r", obj)
                return
            key = job_key(inner)
        self.work_queue.add(key)

    def add_tfjob(self, obj: dict, is_in_initial_list: bool = False) -> None:
        try:
            job = decode_tfjob(obj)
        except InvalidTFJobError as err:
            logger_for_unstructured(obj, KIND).error("Failed to convert the TFJob: %s", err)
        else:
            logger_for_job({"metadata": job.metadata}).info("TFJob %s is created.", job.name)
        self.enqueue_tfjob(obj)

    def update_tfjob(self, old: dict, cur: dict) -> None:
        self.enqueue_tfjob(cur)
        try:
            old_job, cur_job = decode_tfjob(old), decode_tfjob(cur)
        except InvalidTFJobError:
            return
        log.info("Updating tfjob: %s", old_job.name)
        ads = cur_job.spec.active_deadline_seconds
        start = cur_job.status.start_time
        if start is None or ads is None or old_job.spec.active_deadline_seconds == ads:
            return
        remaining = seconds_until_deadline(ads, start, self.clock.now())
        self.work_queue.add_after(job_key(cur_job), remaining)
        log.info("job ActiveDeadlineSeconds updated, will rsync after %d seconds", remaining)

    def delete_tfjob_event(self, obj: Any) -> None:
        self.enqueue_tfjob(obj)

    # ---- invalid jobs ----------------------------------------------------------------------

    def handle_invalid_tfjob(self, raw: dict, err: InvalidTFJobError) -> None:
        """Report an invalid job: Warning event and a Failed condition (once per error)."""
        message = INVALID_SPEC_MESSAGE.format(err)
        logger = logger_for_unstructured(raw, KIND)
        logger.warning(message)
        existing = invalid_condition(raw.get("status"))
        if existing is not None and existing.get("message") == message:
            return
        now = truncate_time(self.clock.now())
        condition = JobCondition(
            JOB_FAILED, CONDITION_TRUE, FAILED_MARSHAL_TFJOB_REASON, message, now, now
        )
        if self._write_invalid_status(raw, {"conditions": [condition.to_dict()]}, logger):
            self.recorder.event(raw, EVENT_TYPE_WARNING, FAILED_MARSHAL_TFJOB_REASON, message)

    def _write_invalid_status(self, raw: dict, status: dict, logger: Any) -> bool:
        """Replace the whole status (as v0.5.3 did); False if not written or already there."""
        body = copy.deepcopy(raw)
        body["status"] = status
        name, namespace = meta(raw).get("name", ""), meta(raw).get("namespace", "")
        message = status["conditions"][0]["message"]
        for attempt in range(1, INVALID_STATUS_ATTEMPTS + 1):
            try:
                self.tfjob_client.update_status(body, namespace=namespace)
                return True
            except Exception as err:
                if not is_conflict(err) or attempt == INVALID_STATUS_ATTEMPTS:
                    logger.error("Could not update the TFJob: %s", err)
                    return False
            try:
                body = self.tfjob_client.get(name, namespace=namespace)
            except Exception as err:
                logger.error("Could not update the TFJob: %s", err)
                return False
            reported = invalid_condition(body.get("status"))
            if reported is not None and reported.get("message") == message:
                return False  # an earlier pass reported it; our cache was behind
            body["status"] = status
        return False

    # ---- clean-up of finished jobs ---------------------------------------------------------

    def delete_pods_and_services(
        self, job: TFJob, pods: list[dict], services: list[dict], kill_active: bool
    ) -> None:
        policy = job.spec.clean_pod_policy or CLEAN_POD_POLICY_RUNNING
        deleted_names: set[str] = set()
        for pod in pods:
            phase = (pod.get("status") or {}).get("phase")
            doomed = (
                policy == CLEAN_POD_POLICY_ALL
                or (policy == CLEAN_POD_POLICY_RUNNING and phase == "Running")
                or (kill_active and _is_active(pod))
            )
            if not doomed:
                continue
            self.delete_pod_expecting(job, pod)
            deleted_names.add(meta(pod).get("name", ""))
        for service in services:
            name = meta(service).get("name", "")
            if policy == CLEAN_POD_POLICY_ALL or name in deleted_names:
                self.delete_service_expecting(job, service)

    def cleanup_tfjob(self, ctx: ReconcileContext, job: TFJob) -> bool:
        """Apply ``ttlSecondsAfterFinished``; True when the TFJob was deleted."""
        ttl = job.spec.ttl_seconds_after_finished
        if ttl is None:
            return False
        # v0.5.3 dereferenced a nil completionTime here (spec §10 #15); it is set before.
        completion = job.status.completion_time or ctx.now
        remaining = seconds_until_ttl_expiry(ttl, completion, self.clock.now())
        if remaining <= 0:
            try:
                self.delete_tfjob_handler(job)
            except Exception as err:
                if is_not_found(err):
                    return True
                logger_for_job({"metadata": job.metadata}).warning("Cleanup TFJob error: %s.", err)
                raise
            return True
        self.work_queue.add_after(job_key(job), remaining)
        return False

    def delete_tfjob(self, job: TFJob) -> None:
        self.tfjob_client.delete(job.name, namespace=job.namespace)
