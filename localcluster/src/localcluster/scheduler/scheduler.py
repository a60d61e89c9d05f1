"""The default scheduler loop: watch pods and nodes, bind what fits, report what does not.

Design: the shared ``NodeLedger`` (one pod and one node informer for every scheduler of the
cluster) keeps what each node holds; this scheduler listens to its events to keep an active
queue of pending pod keys. One worker thread pops a key, runs the pure predicates from
``predicates`` against the ledger under its lock, "assumes" the pod on the chosen node (so
the next decision, of this or a batch scheduler, already counts it) and calls
``client.bind`` (a Binding). A pod that fits nowhere gets the condition
``PodScheduled=False/Unschedulable`` and waits in the unschedulable set until a node or pod
change (or the periodic retry) moves it back to the active queue. Pods that name another
scheduler (kube-batch, volcano) are never touched.

A pod the predicates cannot even evaluate (a malformed quantity, selector or affinity that
got past validation) gets ``PodScheduled=False/SchedulerError`` and a ``FailedScheduling``
event with the error, and is retried like an unschedulable pod: no pod can stop the loop.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any

from localcluster.client.api import ClusterClient
from localcluster.client.informer import object_key
from localcluster.scheduler.ledger import NodeLedger
from localcluster.scheduler.podconditions import ConditionReporter, bind
from localcluster.scheduler.predicates import is_active, select_node

logger = logging.getLogger(__name__)

SCHEDULER_NAME = "default-scheduler"
# Unschedulable pods are retried at least this often even without cluster changes.
DEFAULT_RETRY_SECONDS = 5.0
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


def is_responsible(pod: dict[str, Any]) -> bool:
    return (pod.get("spec") or {}).get("schedulerName") in (None, "", SCHEDULER_NAME)


def needs_scheduling(pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    meta = pod.get("metadata") or {}
    return (
        not spec.get("nodeName")
        and not meta.get("deletionTimestamp")
        and is_active(pod)
        and is_responsible(pod)
    )


class Scheduler:
    """Binds pending pods whose schedulerName is empty or ``default-scheduler``."""

    def __init__(
        self,
        client: ClusterClient,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
        ledger: NodeLedger | None = None,
    ) -> None:
        self._client = client
        self._retry_seconds = retry_seconds
        self.ledger = ledger or NodeLedger(client)
        self._cond = threading.Condition()
        self._pending: dict[str, dict[str, Any]] = {}  # pod key -> latest unbound pod
        self._queue: deque[str] = deque()
        self._queued: set[str] = set()
        self._unschedulable: set[str] = set()
        self._moves = 0  # bumped whenever room may have been freed (see _park)
        self._reporter = ConditionReporter(client, SCHEDULER_NAME)
        self.ledger.add_pod_listener(self._on_pod)
        self.ledger.add_node_listener(self._on_node)
        self._threads: list[threading.Thread] = []

    def start(self, stop_event: threading.Event) -> None:
        self._threads += self.ledger.start(stop_event)
        worker = threading.Thread(
            target=self._run, args=(stop_event,), name="scheduler", daemon=True
        )
        worker.start()
        self._threads.append(worker)

    def join(self, timeout: float | None = None) -> None:
        with self._cond:
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout)

    # -- queue maintenance (ledger listeners) ----------------------------------------------

    def _on_node(
        self, _event_type: str, _node: dict[str, Any], _old: dict[str, Any] | None
    ) -> None:
        with self._cond:
            self._flush_unschedulable()

    def _on_pod(self, event_type: str, pod: dict[str, Any], _old: dict[str, Any] | None) -> None:
        key = object_key(pod)
        with self._cond:
            if event_type != "DELETED" and needs_scheduling(pod):
                self._pending[key] = pod
                if key not in self._unschedulable:
                    self._enqueue(key)
                return
            self._pending.pop(key, None)
            self._unschedulable.discard(key)
            if is_responsible(pod):
                self._reporter.forget(key)
            if event_type == "DELETED" or not is_active(pod):
                self._flush_unschedulable()  # resources were freed

    def _enqueue(self, key: str) -> None:
        if key not in self._queued:
            self._queued.add(key)
            self._queue.append(key)
            self._cond.notify()

    def _flush_unschedulable(self) -> None:
        self._moves += 1
        for key in sorted(self._unschedulable):
            self._enqueue(key)
        self._unschedulable.clear()

    def _park(self, key: str, moves_at_pop: int) -> None:
        """Wait for a change, unless one already happened while the pod was being evaluated."""
        with self._cond:
            if key not in self._pending:
                return
            if self._moves != moves_at_pop:
                self._enqueue(key)
            else:
                self._unschedulable.add(key)

    # -- scheduling (worker thread) --------------------------------------------------------

    def _run(self, stop_event: threading.Event) -> None:
        self.ledger.wait_for_sync()
        while not stop_event.is_set():
            with self._cond:
                if not self._queue:
                    notified = self._cond.wait(self._retry_seconds)
                    if not notified and not self._queue:
                        self._flush_unschedulable()
                    continue
                key = self._queue.popleft()
                self._queued.discard(key)
                pod = self._pending.get(key)
                moves = self._moves
            if pod is None:
                continue
            try:
                self._schedule_one(key, pod, moves)
            except Exception:  # noqa: BLE001 - keep scheduling other pods
                logger.exception("scheduling %s failed", key)
                self._park(key, moves)

    def _schedule_one(self, key: str, pod: dict[str, Any], moves: int) -> None:
        reason, message = REASON_UNSCHEDULABLE, ""
        try:
            with self.ledger.locked() as infos:
                chosen, message = select_node(pod, infos)
                if chosen is not None:
                    self.ledger.assume(pod, chosen.name)
        except Exception as err:  # noqa: BLE001 - a malformed pod: report it, never stop
            chosen, reason = None, REASON_SCHEDULER_ERROR
            message = f"cannot evaluate pod {key}: {err}"
        if chosen is not None:
            self._bind(key, pod, chosen.name)
            return
        self._park(key, moves)
        self._mark_unschedulable(pod, reason, message)

    def _bind(self, key: str, pod: dict[str, Any], node_name: str) -> None:
        err = bind(self._client, key, pod, node_name, SCHEDULER_NAME)
        if err is not None:  # deleted or bound meanwhile: the watch tells
            logger.info("binding %s to %s failed: %s", key, node_name, err)
            self.ledger.forget(key)
            return
        logger.debug("bound %s to %s", key, node_name)

    def _mark_unschedulable(self, pod: dict[str, Any], reason: str, message: str) -> None:
        self._reporter.report(pod, reason, message, "FailedScheduling")
