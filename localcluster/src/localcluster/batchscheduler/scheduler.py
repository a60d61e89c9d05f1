"""``BatchScheduler``: one flavour's loop of snapshot -> session -> actions -> close.

Every ``schedule_period`` seconds (0 = only when ``run_once`` is called) the scheduler takes a
snapshot of its cache, opens a session, lets the configured plugins register their hooks, runs
the configured actions in order, lets the plugins close (gang writes its conditions), and then
writes back what changed: PodGroup status, PodGroup events, pod conditions of the tasks that
stay unscheduled (texts in ``status``). ``run_once`` first syncs the cache with everything
committed before the call, so a test that writes then calls it sees exactly its writes.

Nothing can stop the loop: a failing action or job is logged and skipped, a failing cycle is
logged and the next one runs.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from localcluster.batchscheduler import status
from localcluster.batchscheduler.actions import ACTIONS
from localcluster.batchscheduler.api import JobInfo, TaskStatus
from localcluster.batchscheduler.cache import BatchCache
from localcluster.batchscheduler.conf import load_conf
from localcluster.batchscheduler.flavours import FLAVOURS, Flavour
from localcluster.batchscheduler.plugins import build
from localcluster.batchscheduler.session import CycleSummary, Session
from localcluster.client.api import ClusterClient
from localcluster.client.events import now_rfc3339
from localcluster.scheduler.ledger import NodeLedger

logger = logging.getLogger(__name__)

DEFAULT_SCHEDULE_PERIOD = 1.0
# A pod the scheduler cannot evaluate (malformed quantity, selector, affinity), as kube-scheduler
# reports it: condition reason SchedulerError, Warning event FailedScheduling.
REASON_SCHEDULER_ERROR = "SchedulerError"
FAILED_SCHEDULING = "FailedScheduling"


class BatchScheduler:
    """kube-batch or Volcano for pods whose ``schedulerName`` names the flavour."""

    def __init__(
        self,
        client: ClusterClient,
        flavour: str | Flavour,
        *,
        ledger: NodeLedger | None = None,
        conf: Any = None,
        schedule_period: float = DEFAULT_SCHEDULE_PERIOD,
    ) -> None:
        self.flavour = flavour if isinstance(flavour, Flavour) else FLAVOURS[flavour]
        self.conf = load_conf(conf, self.flavour)
        self.ledger = ledger or NodeLedger(client)
        self.cache = BatchCache(client, self.ledger, self.flavour)
        self.schedule_period = schedule_period
        self._cycle_lock = threading.Lock()
        self._paused = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = self.cache.start(stop_event)
        if self.schedule_period > 0:
            loop = threading.Thread(
                target=self._loop,
                args=(stop_event,),
                name=f"batch-{self.flavour.name}",
                daemon=True,
            )
            loop.start()
            threads.append(loop)
        self._threads += threads
        return threads

    def join(self, timeout: float | None = None) -> None:
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout)

    def pause(self) -> None:
        self._paused.set()

    def resume(self) -> None:
        self._paused.clear()

    def _loop(self, stop_event: threading.Event) -> None:
        self.cache.wait_for_sync()
        while not stop_event.wait(self.schedule_period):
            if self._paused.is_set():
                continue
            try:
                with self._cycle_lock:
                    self._cycle()
            except Exception:  # noqa: BLE001 - the loop never dies
                logger.exception("%s: scheduling cycle failed", self.flavour.name)

    # -- one cycle ------------------------------------------------------------------------

    def run_once(self) -> CycleSummary:
        """Sync with everything committed so far, then run one cycle synchronously."""
        with self._cycle_lock:
            if not self.cache.sync():
                logger.warning("%s: cache not synced; scheduling on what it has", self.flavour.name)
            return self._cycle()

    def _cycle(self) -> CycleSummary:
        snap = self.cache.snapshot()
        ssn = Session(
            self.flavour, self.conf, snap.jobs, snap.nodes, snap.queues, self.cache, now_rfc3339()
        )
        ssn.malformed.update({key: message for key, (_, message) in snap.malformed.items()})
        plugins = [build(option) for tier in self.conf.tiers for option in tier]
        for plugin in plugins:
            plugin.on_open(ssn)
        for name in self.conf.actions:
            try:
                ACTIONS[name](ssn)
            except Exception:  # noqa: BLE001 - one action's failure must not stop the others
                logger.exception("%s: action %s failed", self.flavour.name, name)
        for plugin in plugins:
            plugin.on_close(ssn)
        self._close(ssn, {key: pod for key, (pod, _) in snap.malformed.items()})
        logger.debug(
            "%s: session %s: %d jobs, bound %d, evicted %d",
            self.flavour.name,
            ssn.uid,
            len(ssn.jobs),
            len(ssn.summary.bound),
            len(ssn.summary.evicted),
        )
        return ssn.summary

    def _close(self, ssn: Session, malformed_pods: dict[str, dict[str, Any]]) -> None:
        """Write back every job, then report the pods that could not be evaluated."""
        pods = dict(malformed_pods)
        for job in ssn.jobs.values():
            try:
                self._close_job(ssn, job)
            except Exception:  # noqa: BLE001 - one job's write-back must not stop the others
                logger.exception("%s: closing job %s failed", self.flavour.name, job.uid)
            ssn.summary.ready[job.uid] = ssn.job_ready(job)
            pods.update({t.key: t.pod for t in job.tasks.values() if t.key in ssn.malformed})
        for key, message in ssn.malformed.items():
            if key in pods:
                self.cache.set_pod_condition(
                    pods[key], REASON_SCHEDULER_ERROR, message, FAILED_SCHEDULING
                )

    def _close_job(self, ssn: Session, job: JobInfo) -> None:
        """Write back one job's PodGroup status, PodGroup event and pod conditions."""
        volcano = self.flavour.volcano
        if job.podgroup is not None:
            job.phase = status.phase_of(job, volcano)
            new = status.podgroup_status(job, volcano)
            if status.status_changed(new, job.podgroup.get("status")):
                self.cache.write_podgroup_status(job, new)
            unschedulable = ("Pending", "Unknown", "Inqueue") if volcano else ("Pending", "Unknown")
            if job.phase in unschedulable:
                message = status.event_message(job, volcano)
                self.cache.podgroup_event(job, "Warning", "Unschedulable", message)
            elif volcano:
                self.cache.podgroup_event(job, "Normal", "Scheduled", status.POD_GROUP_READY)
        waiting = [TaskStatus.PENDING, TaskStatus.ALLOCATED]
        if volcano:
            waiting.append(TaskStatus.PIPELINED)
        tasks = [t for t in job.with_status(*waiting) if t.key not in ssn.malformed]
        if not tasks:
            return
        fit_text = "" if volcano else status.kube_batch_fit_text(job)
        for task in sorted(tasks, key=lambda t: t.key):
            if volcano:
                reason, message = status.task_reason(job, task)
            else:
                reason, message = status.REASON_UNSCHEDULABLE, fit_text
            self.cache.set_pod_condition(task.pod, reason, message)
