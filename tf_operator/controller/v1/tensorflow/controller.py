"""The TFJob controller: construct → run → worker → process_next_work_item → sync → reconcile.

``TFController`` plugs TFJob into the shared :class:`JobController` (names, labels, how to read
a job) and adds the TFJob behaviour from its topic modules: :mod:`.job` (events, invalid jobs,
clean-up), :mod:`.pod`, :mod:`.service`, :mod:`.status`, :mod:`.tensorflow` (TF_CONFIG).

``run(threadiness, stop_event)`` waits for the TFJob, pod and service caches, starts
``threadiness`` worker threads and blocks until ``stop_event`` is set; it then shuts the queue
down, lets each worker finish the key it holds (keys still queued are dropped) and returns once
they have exited. The queue never gives one key to two workers.

A sync (spec §5.3, §5.4) reads the job from the cache; a deleted job drops its expectations;
an invalid job is reported (:mod:`.job`); otherwise, when the job's expectations are all met,
the job is reconciled: claim pods and services, check backoff and deadline limits, then either
clean up a finished job or reconcile each replica type in a fixed order, and write the status
only when it changed. Errors are aggregated; the key is requeued with rate limiting on error
and forgotten on success.

Seams for tests: ``sync_handler``, ``update_status_handler``, ``delete_tfjob_handler`` and the
injected ``clock``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from tf_operator.apis.common.v1.types import (
    JOB_CREATED,
    RESTART_POLICY_ALWAYS,
    RESTART_POLICY_ON_FAILURE,
    truncate_time,
)
from tf_operator.apis.tensorflow.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    GROUP_NAME,
    GROUP_VERSION,
    KIND,
    PLURAL,
)
from tf_operator.apis.tensorflow.v1.defaults import set_defaults_tfjob
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.common.jobcontroller.jobcontroller import (
    GroupVersionKind,
    JobController,
    JobControllerConfiguration,
)
from tf_operator.common.jobcontroller.limits import (
    count_restarts,
    past_active_deadline,
    past_backoff_limit,
)
from tf_operator.common.jobcontroller.util import (
    gen_expectation_pods_key,
    gen_expectation_services_key,
    job_key,
)
from tf_operator.controller.v1.tensorflow import metrics
from tf_operator.controller.v1.tensorflow.context import ReconcileContext
from tf_operator.controller.v1.tensorflow.informer import (
    TFJOBS,
    InvalidTFJobError,
    TFJobInformerMixin,
    TFJobNotFoundError,
    decode_tfjob,
)
from tf_operator.controller.v1.tensorflow.job import (
    JobMixin,
    clear_invalid_condition,
    total_replicas,
)
from tf_operator.controller.v1.tensorflow.pod import PodReconcilerMixin
from tf_operator.controller.v1.tensorflow.service import ServiceReconcilerMixin
from tf_operator.controller.v1.tensorflow.status import (
    TFJOB_CREATED_REASON,
    StatusMixin,
    get_condition,
    is_finished,
    is_succeeded,
    update_job_conditions,
)
from tf_operator.k8s.cache import (
    ResourceEventHandlerFuncs,
    split_meta_namespace_key,
    wait_for_cache_sync,
)
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.listers import Lister
from tf_operator.logger import logger_for_job, logger_for_key

log = logging.getLogger(__name__)

CONTROLLER_NAME = "tf-operator"
TF_REPLICA_TYPE_LABEL = "tf-replica-type"
TF_REPLICA_INDEX_LABEL = "tf-replica-index"
LABEL_GROUP_NAME = "group-name"
LABEL_TFJOB_NAME = "tf-job-name"
LABEL_TFJOB_ROLE = "tf-job-role"

# How long `run` waits for each worker to finish its current key after stop.
WORKER_JOIN_TIMEOUT = 30.0


class TFController(
    JobMixin,
    PodReconcilerMixin,
    ServiceReconcilerMixin,
    StatusMixin,
    TFJobInformerMixin,
    JobController,
):
    """The TFJob controller (contract C of the project)."""

    def __init__(
        self,
        kube_client: Any,
        informer_factory: Any,
        tfjob_informer: Any,
        recorder: Any,
        options: Any,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        log.info("Creating TFJob controller")
        config = JobControllerConfiguration(
            enable_gang_scheduling=bool(getattr(options, "enable_gang_scheduling", False)),
            gang_scheduler_name=getattr(options, "gang_scheduler_name", "") or "kube-batch",
        )
        super().__init__(kube_client, informer_factory, recorder, config, PLURAL, clock)
        self.options = options
        self.tfjob_client = kube_client.resource(TFJOBS)
        self.tfjob_informer = tfjob_informer
        self.tfjob_lister = Lister(tfjob_informer.get_indexer())
        self.tfjob_informer_synced = tfjob_informer.has_synced
        self.sync_handler = self.sync_tfjob
        self.update_status_handler = self.update_tfjob_status
        self.delete_tfjob_handler = self.delete_tfjob
        # Per job key: exit codes already reported, and (uid, pods recreated for ExitCode).
        self.reported_exit_codes: dict[str, set] = {}
        self._recreations: dict[str, tuple[str, int]] = {}
        self._known_jobs: set[str] = set()
        self._state_lock = threading.Lock()
        self._stopping = threading.Event()
        tfjob_informer.add_event_handler(
            ResourceEventHandlerFuncs(self.add_tfjob, self.update_tfjob, self.delete_tfjob_event)
        )

    # ---- ControllerInterface ---------------------------------------------------------------

    def controller_name(self) -> str:
        return CONTROLLER_NAME

    def get_api_group_version_kind(self) -> GroupVersionKind:
        return GroupVersionKind(GROUP_NAME, GROUP_VERSION, KIND)

    def get_group_name_label_key(self) -> str:
        return LABEL_GROUP_NAME

    def get_job_name_label_key(self) -> str:
        return LABEL_TFJOB_NAME

    def get_group_name_label_value(self) -> str:
        return GROUP_NAME

    def get_replica_type_label_key(self) -> str:
        return TF_REPLICA_TYPE_LABEL

    def get_replica_index_label_key(self) -> str:
        return TF_REPLICA_INDEX_LABEL

    def get_job_role_key(self) -> str:
        return LABEL_TFJOB_ROLE

    def get_default_container_name(self) -> str:
        return DEFAULT_CONTAINER_NAME

    def get_default_container_port_name(self) -> str:
        return DEFAULT_PORT_NAME

    def get_job_from_informer_cache(self, namespace: str, name: str) -> TFJob | None:
        try:
            return self.get_tfjob_from_name(namespace, name)
        except (TFJobNotFoundError, InvalidTFJobError):
            return None

    def get_job_from_api_client(self, namespace: str, name: str) -> dict:
        return self.tfjob_client.get(name, namespace=namespace)

    def update_job_status(self, job: TFJob) -> dict | None:
        return self.update_tfjob_status(job)

    # ---- run loop --------------------------------------------------------------------------

    def run(self, threadiness: int, stop_event: threading.Event) -> None:
        """Wait for the caches, run ``threadiness`` workers until ``stop_event``, then drain."""
        log.info("Starting TFJob controller")
        log.info("Waiting for informer caches to sync")
        synced = wait_for_cache_sync(
            stop_event,
            self.tfjob_informer_synced,
            self.pod_informer_synced,
            self.service_informer_synced,
        )
        if not synced:
            self.work_queue.shut_down()
            if stop_event.is_set():
                return
            raise RuntimeError("failed to wait for caches to sync")
        log.info("Starting %d workers", threadiness)
        workers = [
            threading.Thread(target=self.run_worker, name=f"tfjob-worker-{i}", daemon=True)
            for i in range(threadiness)
        ]
        for worker in workers:
            worker.start()
        log.info("Started workers")
        stop_event.wait()
        log.info("Shutting down workers")
        self._stopping.set()
        self.work_queue.shut_down()
        for worker in workers:
            worker.join(WORKER_JOIN_TIMEOUT)

    def run_worker(self) -> None:
        while self.process_next_work_item():
            pass

    def process_next_work_item(self) -> bool:
        """Process one key; False once the queue is shut down and empty."""
        key, shutdown = self.work_queue.get()
        if shutdown:
            return False
        try:
            if not isinstance(key, str):
                self.work_queue.forget(key)
                log.error("expected string in workqueue but got %r", key)
                return True
            if self._stopping.is_set():
                return True  # shutting down: leave queued keys to the next leader/start
            try:
                forget = self.sync_handler(key)
            except Exception as err:
                logger_for_key(key).error("error syncing tfjob: %s", err)
                log.debug("sync of %s failed", key, exc_info=True)
                self.work_queue.add_rate_limited(key)
                return True
            if forget:
                self.work_queue.forget(key)
            return True
        finally:
            self.work_queue.done(key)

    # ---- sync ------------------------------------------------------------------------------

    def sync_tfjob(self, key: str) -> bool:
        """Sync one job; True means the key can be forgotten (always, unless it raises)."""
        started = self.clock.monotonic()
        logger = logger_for_key(key)
        try:
            namespace, name = split_meta_namespace_key(key)
            if not namespace or not name:
                raise ValueError(f'invalid tfjob key "{key}": either namespace or name is missing')
            raw = self.get_raw_tfjob(namespace, name)
            if raw is None:
                logger.info("TFJob has been deleted: %s", key)
                self._forget_job(key)
                return True
            try:
                job = decode_tfjob(raw)
            except InvalidTFJobError as err:
                self.handle_invalid_tfjob(raw, err)
                return True
            self._remember_job(key, job)
            needs_sync = self.satisfied_expectations(job)
            set_defaults_tfjob(job)
            if needs_sync and not job.deletion_timestamp:
                self.reconcile_tfjobs(job)
            return True
        finally:
            elapsed = self.clock.monotonic() - started
            logger.info('Finished syncing tfjob "%s" (%.3fs)', key, elapsed)

    def _remember_job(self, key: str, job: TFJob) -> None:
        with self._state_lock:
            self._known_jobs.add(key)
            recorded = self._recreations.get(key)
            if recorded is not None and recorded[0] != job.uid:
                # Same name, new job: forget what we counted for the old one.
                del self._recreations[key]
                self.reported_exit_codes.pop(key, None)

    def _forget_job(self, key: str) -> None:
        """A job left the cache: count it once and drop everything kept for it (#5, #33)."""
        with self._state_lock:
            known = key in self._known_jobs
            self._known_jobs.discard(key)
            self._recreations.pop(key, None)
            self.reported_exit_codes.pop(key, None)
        if known:
            metrics.JOBS_DELETED.inc()
        self.expectations.delete_expectations_with_prefix(key + "/")

    def record_recreation(self, job: TFJob) -> None:
        key = job_key(job)
        with self._state_lock:
            uid, count = self._recreations.get(key, (job.uid, 0))
            self._recreations[key] = (job.uid, count + 1)

    def recreations(self, job: TFJob) -> int:
        with self._state_lock:
            uid, count = self._recreations.get(job_key(job), (job.uid, 0))
            return count if uid == job.uid else 0

    def satisfied_expectations(self, job: TFJob) -> bool:
        """True when every pod and service expectation of the job is met.

        v0.5.3 OR-ed the keys (one met key let the job sync) and returned False for a job
        without replica types (spec §10 #1).
        """
        key = job_key(job)
        for rtype in job.spec.tf_replica_specs or {}:
            for exp_key in (
                gen_expectation_pods_key(key, rtype),
                gen_expectation_services_key(key, rtype),
            ):
                if not self.expectations.satisfied_expectations(exp_key):
                    return False
        return True

    # ---- reconcile -------------------------------------------------------------------------

    def reconcile_tfjobs(self, job: TFJob) -> None:
        logger = logger_for_job({"metadata": job.metadata})
        logger.info("Reconcile TFJobs %s", job.name)
        old_status = job.status.to_dict()
        ctx = ReconcileContext(now=truncate_time(self.clock.now()))
        clear_invalid_condition(job.status)
        if get_condition(job.status, JOB_CREATED) is None:
            msg = f"TFJob {job.name} is created."
            if update_job_conditions(job.status, JOB_CREATED, TFJOB_CREATED_REASON, msg, ctx.now):
                ctx.count(metrics.JOBS_CREATED.inc, JOB_CREATED)

        pods = self.get_pods_for_job(job)
        services = self.get_services_for_job(job)
        failure_message = self.limit_failure_message(ctx, job, pods)
        if is_finished(job.status) or failure_message:
            self.reconcile_finished(ctx, job, pods, services, failure_message, old_status)
            return

        if self.config.enable_gang_scheduling:
            try:
                self.sync_pod_group(job, total_replicas(job))
            except Exception as err:
                logger.warning("Sync PodGroup %s: %s", job.name, err)
        specs = job.spec.tf_replica_specs or {}
        for rtype in job.replica_types():
            spec = specs[rtype]
            try:
                self.reconcile_pods(ctx, job, pods, rtype, spec)
            except Exception as err:
                logger.warning("reconcilePods error %s", err)
                ctx.errors.append(err)
            try:
                self.reconcile_services(ctx, job, services, rtype, spec)
            except Exception as err:
                logger.warning("reconcileServices error %s", err)
                ctx.errors.append(err)
        self.write_status_if_changed(ctx, job, old_status)
        ctx.raise_errors()

    def limit_failure_message(
        self, ctx: ReconcileContext, job: TFJob, pods: list[dict]
    ) -> str | None:
        """The Failed message when the backoff limit or the active deadline is exceeded."""
        if job.spec.backoff_limit is not None:
            failures = self.recreations(job)
            for rtype in job.replica_types():
                spec = (job.spec.tf_replica_specs or {})[rtype]
                if spec.restart_policy not in (RESTART_POLICY_ON_FAILURE, RESTART_POLICY_ALWAYS):
                    logger_for_job({"metadata": job.metadata}).warning(
                        "The restart policy of replica %s of the job %s is not OnFailure or "
                        "Always. Not counted in backoff limit.",
                        rtype,
                        job.name,
                    )
                    continue
                failures += count_restarts(self.filter_pods_for_replica_type(pods, rtype.lower()))
            if past_backoff_limit(job.spec.backoff_limit, failures):
                return (
                    f"TFJob {job.name} has failed because it has reached the specified "
                    "backoff limit"
                )
        if past_active_deadline(job.spec.active_deadline_seconds, job.status.start_time, ctx.now):
            return (
                f"TFJob {job.name} has failed because it was active longer than specified deadline"
            )
        return None

    def reconcile_finished(
        self,
        ctx: ReconcileContext,
        job: TFJob,
        pods: list[dict],
        services: list[dict],
        failure_message: str | None,
        old_status: dict,
    ) -> None:
        """Terminal branch: fail on limits, clean up, apply the TTL, fold counts, write."""
        if failure_message:
            self.fail_job(ctx, job, failure_message)
        if job.status.completion_time is None:
            job.status.completion_time = ctx.now
        try:
            self.delete_pods_and_services(job, pods, services, kill_active=bool(failure_message))
        except Exception as err:
            ctx.errors.append(err)
        try:
            if self.cleanup_tfjob(ctx, job):
                ctx.flush(self.recorder, job)
                ctx.raise_errors()
                return
        except Exception as err:
            ctx.errors.append(err)
        if self.config.enable_gang_scheduling:
            try:
                self.delete_pod_group(job)
            except Exception as err:
                ctx.errors.append(err)
        if is_succeeded(job.status):
            for counts in (job.status.replica_statuses or {}).values():
                counts.succeeded += counts.active
                counts.active = 0
        self.write_status_if_changed(ctx, job, old_status)
        ctx.raise_errors()
