"""The job controller: construct → run → worker → process_next_work_item → sync → reconcile.

One controller serves one :class:`~.kind.JobKind` and is generic over its job class, as are
the small reconcilers the constructor wires, each with exactly its collaborators. ``run`` waits for the caches, runs
``threadiness`` workers until the stop event, then lets each finish its key; the queue never
gives one key to two workers. :meth:`JobController.sync` leaves a job managed by another
controller alone (training-operator v1.9's ``managedBy``, D63), then decodes the cached job
once, its run policy normalised (D55); a deleted job drops its expectations and memory (D5); an
invalid one runs on its last valid spec, keeps its final status, or is reported (:mod:`.edits`,
D39). A job this process saw finished waits until the cache shows it so (D39), and a pass
waits while the cache still holds the version its own last status write replaced (D47). Otherwise, once every expectation is met (D1),
:meth:`JobController.reconcile` runs one pass with a :class:`~.context.SyncContext`: a
suspended job loses its pods, services and PodGroup and a resumed one starts afresh (D61); the
missing pods and services are handed at the end of its walk to the create helpers, which run
them in slow-start batches while the worker goes on (D46). A failed pass, or a failed create,
requeues the job with rate limiting; the key's backoff is forgotten only by a pass that leaves
no create in flight. A job's lifecycle policy (docs/policies.md, D100-D105) is kept in its
status by the pass and obeyed by three topic modules the pass calls: :mod:`.failure_policy`
(each ended pod judged in the walk; a whole-job restart after it), :mod:`.success_policy`
(the job's success after the walk) and :mod:`.startup` (the blocking reason, the start-up
deadline, the ordered start); a job without one passes through them unchanged. Seams for
tests: ``sync_handler``, the reconciler attributes, the injected ``clock``. ``D<n>``:
docs/divergences.md.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Generic

from tf_operator.apis.common.v1.run_policy import DEFAULTS_V0_5_3, Defaults, other_manager
from tf_operator.apis.common.v1.types import JOB_FAILED, parse_time, truncate_time
from tf_operator.common.jobcontroller.cleanup import CleanupReconciler
from tf_operator.common.jobcontroller.context import ReconcileErrors, SyncContext
from tf_operator.common.jobcontroller.edits import SpecEdits
from tf_operator.common.jobcontroller.failure_policy import (
    restart_whole_job,
    stops_active_replicas,
)
from tf_operator.common.jobcontroller.gang_policy import PriorityClasses, Queues
from tf_operator.common.jobcontroller.job import InvalidJobReporter, JobEventHandlers
from tf_operator.common.jobcontroller.kind import InvalidJobError, J, Job, JobKind
from tf_operator.common.jobcontroller.limits import (
    LimitFailure,
    limit_failure,
    seconds_left,
)
from tf_operator.common.jobcontroller.memory import JobMemory
from tf_operator.common.jobcontroller.owned import (
    POD_TYPE,
    SERVICE_TYPE,
    OwnedObjects,
)
from tf_operator.common.jobcontroller.pod import PodReconciler, pod_uid
from tf_operator.common.jobcontroller.podgroup import (
    PodGroupEvents,
    PodGroupReconciler,
    group_summary,
)
from tf_operator.common.jobcontroller.service import ServiceReconciler
from tf_operator.common.jobcontroller.startup import StartupWatch
from tf_operator.common.jobcontroller.status import (
    StatusReconciler,
    StatusWriter,
    is_finished,
    is_succeeded,
    is_suspended,
    raw_finished_conditions,
)
from tf_operator.common.jobcontroller.success_policy import (
    WORKER_TYPE,
    SuccessPolicy,
    record_policy_in_force,
    stops_running_replicas,
)
from tf_operator.common.jobcontroller.transform import strip_pod, strip_service
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.pod_control import PodControl
from tf_operator.control.service_control import ServiceControl
from tf_operator.control.util import EVENT_TYPE_WARNING, error_text
from tf_operator.control.workload_control import group_control_for
from tf_operator.k8s.cache import SharedIndexInformer, split_meta_namespace_key, wait_for_cache_sync
from tf_operator.k8s.client import KubeInterface, is_forbidden, is_invalid, is_not_found
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.controller.controller_utils import ControllerRefResolver
from tf_operator.k8s.controller.expectations import ControllerExpectations, ExpectedCreate
from tf_operator.k8s.controller.slow_start import SlowStartBatches
from tf_operator.k8s.informers import SharedInformerFactory
from tf_operator.k8s.listers import Lister
from tf_operator.k8s.objects import meta
from tf_operator.k8s.workqueue import default_controller_rate_limiter, new_rate_limiting_queue
from tf_operator.logger import logger_for_job, logger_for_key, logger_for_kind

# The Failed reason of a job whose pod or service name another controller's object holds.
NAME_CONFLICT_REASON = "NameConflict"
# The Warning event of a job whose creates the API server refuses (D157).
CREATE_REFUSED_REASON = "CreateRefused"
# How long `run` waits for each worker to finish its current key after stop.
WORKER_JOIN_TIMEOUT = 30.0


@dataclass
class JobControllerConfiguration:
    """Settings of the controller (v0.5.3's ReconcilerSyncLoopPeriod was never used)."""

    enable_gang_scheduling: bool = False
    gang_scheduler_name: str = "kube-batch"
    # updates of a job's pods within this many seconds are synced together (D51); 0: each
    pod_updates_batch_period: float = 0.0
    # where v1.9 changed a v0.5.3 default, which one a job without its own choice gets (D56)
    defaults: Defaults = DEFAULTS_V0_5_3


class JobController(Generic[J]):
    """The controller of one job kind, generic over its job class; see the module docstring."""

    def __init__(
        self,
        kind: JobKind[J],
        kube_client: KubeInterface,
        informer_factory: SharedInformerFactory,
        job_informer: SharedIndexInformer,
        recorder: EventRecorder,
        config: JobControllerConfiguration,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.kind = kind
        self.config = config
        self.clock = clock
        self.recorder = recorder
        self.work_queue = new_rate_limiting_queue(
            default_controller_rate_limiter(), name=kind.resource.plural, clock=clock
        )
        self.expectations = ControllerExpectations(clock)
        self.memory = JobMemory(clock.monotonic)
        self.job_client = kube_client.resource(kind.resource)
        self.job_lister = Lister(job_informer.get_indexer())
        pod_informer, service_informer = informer_factory.pods(), informer_factory.services()
        pod_informer.set_transform(strip_pod)  # cache only what the reconcilers read
        service_informer.set_transform(strip_service)
        self._synced = [i.has_synced for i in (job_informer, pod_informer, service_informer)]

        pod_control = PodControl(kube_client, recorder)
        service_control = ServiceControl(kube_client, recorder)
        # kind, API group (v0.5.3 ignored it, D26) and UID must match
        owners = ControllerRefResolver(kind.resource.kind, kind.resource.group, self.job_lister)
        owned = partial(
            OwnedObjects,
            kind=kind,
            owners=owners,
            expectations=self.expectations,
            queue=self.work_queue,
            live_jobs=self.job_client,
            job_finished=self.memory.is_finished,
            job_cleaned=self.memory.is_cleaned,
        )
        self.pods = owned(
            POD_TYPE,
            informer=pod_informer,
            control=pod_control,
            update_batch_period=config.pod_updates_batch_period,
        )
        self.services = owned(SERVICE_TYPE, informer=service_informer, control=service_control)
        self.pod_groups: PodGroupReconciler[J] | None = None
        if config.enable_gang_scheduling:
            groups = group_control_for(kube_client, recorder, config.gang_scheduler_name)
            backend = groups.backend
            priorities = PriorityClasses(kube_client)
            queues = Queues(kube_client, backend.queues)
            self.pod_groups = PodGroupReconciler(
                kind, groups, recorder, self.memory, priorities.value, queues.missing
            )
            # Not waited for: it only brings a job back when its group's status changes (a
            # missing PodGroup CRD must not keep the workers from starting).
            group_informer = informer_factory.for_resource(backend.pod_groups)
            group_informer.add_event_handler(
                PodGroupEvents(owners, self.work_queue, group_summary(backend)).event_handler()
            )
        self.pod_reconciler = PodReconciler(
            kind, self.pods, pod_control, recorder, self.memory, self.pod_groups
        )
        self.service_reconciler = ServiceReconciler(kind, self.services, service_control)
        self.status = StatusReconciler(kind)
        self.success_policy: SuccessPolicy[J] = SuccessPolicy(self.status.succeed)
        self.startup: StartupWatch[J] = StartupWatch(
            kind.labels.replica_type, self.status.fail, self._requeue
        )
        self.status_writer = StatusWriter(self.job_client, recorder, self.memory.status_written)
        self.cleanup = CleanupReconciler(
            kind.resource.kind, self.pods, self.services, self.job_client, self.work_queue, clock
        )
        # a seam: tests run the batches in order, before the pass goes on
        self.create_batches: SlowStartBatches[ExpectedCreate] = SlowStartBatches()
        self.invalid = InvalidJobReporter(kind, self.job_client, recorder, self.memory)
        self.edits = SpecEdits(kind, recorder, self.memory, self.invalid, config.defaults)
        self.job_events = JobEventHandlers(
            kind, self.work_queue, self._forget, self.memory.quiet_update
        )
        self.sync_handler = self.sync
        self._stopping = threading.Event()

        # The handlers only lower expectations and enqueue keys, so they run on the
        # informers' own threads (no hand-off per event). The pod and service update handlers
        # ignore resyncs (same resourceVersion), as v0.5.3's did: they ask for none, so those
        # informers never re-deliver every cached object for nothing.
        pod_informer.add_event_handler(self.pods.event_handler(), resync_period=0, inline=True)
        service_informer.add_event_handler(
            self.services.event_handler(), resync_period=0, inline=True
        )
        job_informer.add_event_handler(self.job_events.event_handler(), inline=True)

    # ---- run loop --------------------------------------------------------------------------

    def run(self, threadiness: int, stop_event: threading.Event) -> None:
        """Wait for the caches, run ``threadiness`` workers until ``stop_event``, then drain."""
        logger = logger_for_kind(self.kind.resource.kind)
        logger.info("Starting %s controller", self.kind.resource.kind)
        logger.info("Waiting for informer caches to sync")
        if not wait_for_cache_sync(stop_event, *self._synced):
            self.work_queue.shut_down()
            if stop_event.is_set():
                return
            raise RuntimeError("failed to wait for caches to sync")
        logger.info("Starting %d workers", threadiness)
        workers = [
            threading.Thread(target=self.run_worker, name=f"job-worker-{i}", daemon=True)
            for i in range(threadiness)
        ]
        for worker in workers:
            worker.start()
        logger.info("Started workers")
        stop_event.wait()
        logger.info("Shutting down workers")
        self._stopping.set()
        self.work_queue.shut_down()
        for worker in workers:
            worker.join(WORKER_JOIN_TIMEOUT)
        self.create_batches.shutdown()

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
                logger_for_kind(self.kind.resource.kind).error(
                    "expected string in workqueue but got %r", key
                )
                return True
            if self._stopping.is_set():
                return True  # shutting down: leave queued keys to the next leader/start
            try:
                forget = self.sync_handler(key)
            except Exception as err:
                self._sync_failed(key, err)
                return True
            if forget:
                self.work_queue.forget(key)
            return True
        finally:
            self.work_queue.done(key)

    def _sync_failed(self, key: str, err: BaseException) -> None:
        logger = logger_for_key(key, self.kind.resource.kind)
        logger.error("error syncing %s: %s", self.kind.resource.kind.lower(), err)
        logger.debug("sync of %s failed", key, exc_info=err)
        self.work_queue.add_rate_limited(key)

    # ---- sync ------------------------------------------------------------------------------

    def sync(self, key: str) -> bool:
        """Sync one job; True means the key's backoff can be forgotten: False while creates
        are in flight (D46), so that a failing create keeps growing the backoff."""
        started = self.clock.monotonic()
        logger = logger_for_key(key, self.kind.resource.kind)
        noun = self.kind.resource.kind.lower()
        waited = False  # a pass that only waits for its own writes is logged at DEBUG (D53)
        try:
            namespace, name = split_meta_namespace_key(key)
            if not namespace or not name:
                raise ValueError(f'invalid {noun} key "{key}": either namespace or name is missing')
            raw = self.job_lister.get(namespace, name)
            if raw is None:
                logger.info("%s has been deleted: %s", self.kind.resource.kind, key)
                self._forget(key)
                return True
            manager = other_manager(raw)
            if manager is not None:
                # v1.9's managedBy: no pod, no status write, no event (D63)
                logger.debug("%s %s is managed by %s; left alone", noun, key, manager)
                return True
            met = self._met_before_decoding(key, raw)
            if met is None:
                waited = True
                return False  # before decoding: most passes a burst queues end here
            now = truncate_time(self.clock.now())
            decoded = self.edits.decode(raw, now)
            if decoded is None:
                self._expire_invalid(key, raw)
                return True
            job, ignored, record = decoded
            self.memory.remember(key, job.uid)
            if self.memory.is_finished(key, job.uid) and not is_finished(job.status):
                # Our finishing status write is not in the cache yet: a pass now could
                # recreate the pods clean-up deleted. Its update event brings the key back.
                logger.info("%s %s finished; waiting for the cache to show it", noun, key)
                return True
            if not self._expectations_met_for(
                key, (t for t in job.replica_specs() if t not in met)
            ):
                waited = True
                self.memory.set_cleaned(
                    key, job.uid, False
                )  # the events it waits for bring it back
                return False  # creates in flight: their failure requeues with backoff
            if self._cache_behind(key, raw):
                waited = True
                return True
            if job.deletion_timestamp:
                return True
            self.kind.set_defaults(job)  # only the pass reads the defaults
            logger = logger_for_job({"metadata": job.metadata}, self.kind.resource.kind)
            ctx = SyncContext(key, job, now, logger, job.status.to_dict(), raw=raw)
            ctx.spec_record = record
            self.reconcile(ctx, ignored)
            return not ctx.creates
        finally:
            elapsed = self.clock.monotonic() - started
            level = logging.DEBUG if waited else logging.INFO
            logger.log(level, 'Finished syncing %s "%s" (%.3fs)', noun, key, elapsed)

    def _expire_invalid(self, key: str, raw: dict[str, object]) -> None:
        """``ttlSecondsAfterFinished`` of a job Failed as invalid, which no pass decodes:
        counted from its Failed condition, read from the raw spec (D155)."""
        failed = [
            c
            for c in raw_finished_conditions(raw)
            if c.get("type") == JOB_FAILED and c.get("reason") == self.invalid.reason
        ]
        ttl = raw_ttl_seconds(raw)
        since = parse_time(failed[0].get("lastTransitionTime"), "") if failed else None
        if ttl is None or since is None:
            return
        remaining = seconds_left(ttl, since, self.clock.now())
        if remaining > 0:
            self.work_queue.add_after(key, remaining)
            return
        m = meta(raw)
        try:
            self.job_client.delete(str(m.get("name")), namespace=str(m.get("namespace")))
        except Exception as err:
            if not is_not_found(err):
                raise

    def _forget(self, key: str) -> None:
        """A job left the cache: count it once and drop everything kept for it (D5)."""
        if self.memory.forget(key):
            self.kind.metrics.deleted.inc()
        self.expectations.delete_expectations_with_prefix(key + "/")
        self.startup.forget(key)

    def _cache_behind(self, key: str, raw: dict[str, object]) -> bool:
        """The cache still holds the version our last status write replaced: skip this pass
        (the informer's update of our write queues the job again), as a pass computed from
        it would only meet a 409."""
        behind = self.memory.cache_behind_own_write(key, str(meta(raw).get("resourceVersion")))
        if behind:
            logger_for_key(key, self.kind.resource.kind).debug(
                "%s: cache behind our last status write; waiting for it", key
            )
        return behind

    def expectations_met(self, key: str, job: Job) -> bool:
        """True when every pod and service expectation of the job is met.

        v0.5.3 OR-ed the keys (one met key let the job sync) and returned False for a job
        without replica types (divergence D1).
        """
        return self._expectations_met_for(key, job.replica_specs())

    def _expectations_met_for(self, key: str, replica_types: Iterable[str]) -> bool:
        for rtype in replica_types:
            for owned in (self.pods, self.services):
                if not self.expectations.satisfied_expectations(owned.expectation_key(key, rtype)):
                    return False
        return True

    def _met_before_decoding(self, key: str, raw: dict[str, object]) -> frozenset[str] | None:
        """None when a running job's creates or deletes are still unobserved for a replica
        type its cached object names, so the pass would end at its expectations anyway;
        checked on the raw object (decoding validates it later). Otherwise the replica types
        found met, which the pass need not check again (only its own creates raise them). A
        finished job goes the whole way: its edits are announced even while its clean-up is
        in flight."""
        if self.memory.is_finished(key, str(meta(raw).get("uid", ""))):
            return frozenset()
        spec = raw.get("spec")
        specs = spec.get(self.kind.replica_specs_field) if isinstance(spec, dict) else None
        if not isinstance(specs, dict):
            return frozenset()
        return frozenset(specs) if self._expectations_met_for(key, specs) else None

    # ---- reconcile -------------------------------------------------------------------------

    def reconcile(self, ctx: SyncContext[J], ignored: InvalidJobError | None = None) -> None:
        """One pass over one job (v0.5.3 ``reconcileTFJobs``); ``ignored`` is the error of an
        invalid edit the pass ignores, running on the last valid spec (D39)."""
        job = ctx.job
        ctx.logger.info("Reconcile %ss %s", self.kind.resource.kind, job.name)
        self.edits.note(ctx, ignored)
        self.invalid.note_fixed(ctx)
        self.status.mark_created(ctx)
        pods = self.pods.cached(job)  # one snapshot for the claim and the stale check
        ctx.pods = self.pods.claim(job, pods)
        ctx.services = self.services.claim(job)
        self.pods.replace_stale(ctx, pods)  # an earlier job's pods are no run of this one (D67)
        record_policy_in_force(job)  # the lifecycle policy in force is kept in status (D100)

        kind, finished = self.kind, is_finished(job.status)
        if not finished and job.run_policy.suspend:
            self.suspend(ctx)  # no limit runs out meanwhile: it has no pods (D61)
            return
        if not finished and is_suspended(job.status):
            self.status.resume(ctx)  # before the limits: the deadline counts from now
        failure = limit_failure(kind, job, ctx.pods, ctx.now, ctx.logger)
        if finished or failure:
            self.finish(ctx, failure)
            return

        # a gang backend may hold the pods back until it admits the job's group (D62)
        admitted = self.pod_groups is None or self.pod_groups.sync(ctx)
        worker0_completed = restart_job = False
        try:
            for rtype, spec in job.replica_specs().items() if admitted else ():
                tally = ctx.collect(self.pod_reconciler.reconcile, ctx, rtype, spec)
                if tally is not None:
                    self.status.update_replica_type(ctx, rtype, spec.replicas or 0, tally)
                    worker0_completed |= rtype == WORKER_TYPE and tally.index0_completed
                    restart_job |= tally.restart_job
                ctx.collect(self.service_reconciler.reconcile, ctx, rtype, spec)
            if ctx.conflicts:  # before the creates are handed over: they are skipped (D152)
                self.status.fail(ctx, ctx.conflicts[0], NAME_CONFLICT_REASON, EVENT_TYPE_WARNING)
            if restart_job and not is_finished(job.status):
                restart_whole_job(ctx)  # a failure rule restarts every replica (D103)
            elif admitted:
                self.success_policy.decide(ctx, worker0_completed)  # a success rule (D101)
            if not restart_job and not is_finished(job.status):
                self._refused_creates(ctx)
                gang = ctx.gang_unschedulable or ctx.gang_wait
                self.startup.check(ctx, admitted, gang)  # blocking reason, deadline (D104)
                if ctx.blocked is not None and ctx.recheck_after is not None:
                    self._requeue(ctx.key, ctx.recheck_after)
        finally:
            self._submit_creates(ctx)  # their expectations are raised: they must run
        if job.status.exit_code_restarts is not None:
            job.status.exit_code_restarts.retain({pod_uid(p) for p in ctx.pods})
        self._write_status(ctx)
        self.pod_reconciler.restart_recorded(ctx)
        self._arm_deadline(ctx)
        ctx.raise_errors()

    def _refused_creates(self, ctx: SyncContext[J]) -> None:
        """Why the API server refused the job's last creates (a missing PriorityClass, a
        quota, an invalid template), remembered by the create helpers: the job is blocked
        until a batch goes through; the refused create's rate-limited retries bring the job
        back (D157)."""
        refusal = self.memory.create_refusal(ctx.key, ctx.job.uid)
        if ctx.blocked is None and refusal:
            ctx.blocked = (CREATE_REFUSED_REASON, refusal)

    def _submit_creates(self, ctx: SyncContext[J]) -> None:
        """Hand the pass's creates to the create helpers (D46); the worker goes on at once.
        A pass that finished the job creates nothing (D50).
        A failure or a skipped create ends like a failed pass: the job is requeued with the
        queue's backoff (``sync`` did not forget it)."""
        if not ctx.creates:
            return
        if is_finished(ctx.job.status):
            # The pass finished the job: its missing pods and services are not needed (D50).
            _skip(create for lane in ctx.creates.values() for create in lane)
            ctx.creates.clear()
            return
        key, uid = ctx.key, ctx.job.uid

        def done(errors: list[BaseException], skipped: list[ExpectedCreate]) -> None:
            _skip(skipped)
            refused = next((e for e in errors if is_forbidden(e) or is_invalid(e)), None)
            told = "" if refused is None else f"the API server refuses: {error_text(refused)}"
            self.memory.set_create_refusal(key, uid, told)
            self.startup.note_creates(key, uid, errors)  # the deadline's clock (D111)
            if errors:
                err = errors[0] if len(errors) == 1 else ReconcileErrors(errors)
                self._sync_failed(key, err)

        self.create_batches.submit(list(ctx.creates.values()), done)

    def suspend(self, ctx: SyncContext[J]) -> None:
        """A suspended job (v1.9's ``runPolicy.suspend``): no pod, service or PodGroup, no
        active replica, Suspended True (D61)."""
        ctx.collect(self.cleanup.delete_everything, ctx)
        if self.pod_groups is not None:
            ctx.collect(self.pod_groups.delete, ctx)
        if ctx.errors:
            # Written only once every deletion is issued: a suspension with active 0 tells
            # Kueue the job has let go of its flavour (D151). The pass is retried.
            ctx.raise_errors()
        self.memory.set_create_refusal(ctx.key, ctx.job.uid, "")
        self.startup.suspended(ctx)
        self.status.suspend(ctx)
        self._write_status(ctx)
        ctx.raise_errors()

    def finish(self, ctx: SyncContext[J], failure: LimitFailure | None) -> None:
        """Terminal branch: fail on limits, clean up, apply the TTL, fold counts, write."""
        job = ctx.job
        self.memory.set_cleaned(ctx.key, job.uid, False)
        if failure:
            self.status.fail(ctx, failure.message, failure.reason)
        if job.status.completion_time is None:
            job.status.completion_time = ctx.now
        # what still runs stops once a success rule is met (D101)
        kill_active = (
            bool(failure)
            or stops_running_replicas(job, is_succeeded(job.status))
            or stops_active_replicas(job)  # failed by a failure rule or the start-up deadline
        )
        ctx.collect(self.cleanup.delete_pods_and_services, ctx, kill_active=kill_active)
        # the TTL waits while the job is suspended, as v1.9's CleanupJob does (D61)
        if not job.run_policy.suspend and ctx.collect(self.cleanup.expire, ctx):
            ctx.flush(self.recorder)
            ctx.raise_errors()
            return
        if self.pod_groups is not None:
            ctx.collect(self.pod_groups.delete, ctx)
        if is_succeeded(job.status):
            for counts in (job.status.replica_statuses or {}).values():
                counts.succeeded += counts.active
                counts.active = 0
        self._write_status(ctx)
        ctx.raise_errors()
        # nothing left here for the deletions it issued to bring back (D97)
        self.memory.set_cleaned(ctx.key, job.uid, True)

    def _write_status(self, ctx: SyncContext[J]) -> None:
        """Write the status if it changed; once written, remember a finished job (see
        ``sync``)."""
        self.edits.record(ctx)
        self.status_writer.write_if_changed(ctx)
        if is_finished(ctx.job.status):
            self.memory.mark_finished(ctx.key, ctx.job.uid)

    def _requeue(self, key: str, seconds: float) -> None:
        self.work_queue.add_after(key, seconds)

    def _arm_deadline(self, ctx: SyncContext[J]) -> None:
        """Re-sync the job when its active deadline passes (v0.5.3 armed this timer in the
        update handler, which had to decode both objects; D7)."""
        job = ctx.job
        deadline, start = job.run_policy.active_deadline_seconds, job.status.start_time
        if deadline is None or start is None or is_finished(job.status):
            return
        self.work_queue.add_after(ctx.key, seconds_left(deadline, start, self.clock.now()))


def _skip(creates: Iterable[ExpectedCreate]) -> None:
    """Lower the expectations of creates that will not run."""
    for create in creates:
        create.skip()


def raw_ttl_seconds(raw: dict[str, object]) -> int | None:
    """``ttlSecondsAfterFinished`` of an undecoded job (either placement), if it is one."""
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        return None
    run_policy = spec.get("runPolicy")
    for holder in (run_policy if isinstance(run_policy, dict) else {}, spec):
        value = holder.get("ttlSecondsAfterFinished")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None
