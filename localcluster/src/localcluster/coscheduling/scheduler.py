"""``CoschedulingScheduler``: a kube-scheduler profile with the Coscheduling plugin.

It schedules the pods whose ``schedulerName`` is its name (``scheduler-plugins-scheduler``, the
name scheduler-plugins' chart gives the profile), one pod per scheduling cycle, as
kube-scheduler's framework runs it:

1. pop the next pod from the ``SchedulingQueue`` (Coscheduling's QueueSort);
2. PreFilter; on refusal, PostFilter and report the pod unschedulable;
3. Filter and score the nodes of the shared ``NodeLedger`` (the default scheduler's
   predicates), then *assume* the pod on the best node (Reserve): every scheduler of the
   cluster now counts it; when no node fits, PostFilter and report;
4. Permit: bind now, hold the assumed pod (*waiting*) until its group has ``minMember``
   assigned or its wait ends, or refuse it.

A waiting pod is let go (allowed) when a later sibling's Permit succeeds: all are bound
together. It fails when its wait ends, when PostFilter or Unreserve rejects it, or when it is
deleted: its assumption is forgotten, Unreserve rejects its waiting siblings in turn, and the
pod goes back to the queue with a back-off. Failures are told as kube-scheduler tells them:
``PodScheduled=False/Unschedulable`` with the fit error's text and a ``FailedScheduling``
event from this scheduler; a bound pod gets a ``Scheduled`` event.

One worker thread runs the cycles, the waits and the bindings; the ledger's informer thread
only records pods, the PodGroup informer's only signals changes. They meet under one lock; the
worker may take it while it holds the ledger's lock (to mark a pod assumed as it assumes it),
never the ledger's while holding it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from localcluster.client.informer import Informer, object_key
from localcluster.coscheduling.manager import PodGroupManager
from localcluster.coscheduling.plugin import NAME as PLUGIN_NAME
from localcluster.coscheduling.plugin import Code, Coscheduling, CoschedulingArgs
from localcluster.coscheduling.podgroup import PODGROUPS, Obj, PodGroupSpec, group_key
from localcluster.coscheduling.queue import SchedulingQueue
from localcluster.scheduler.ledger import NodeLedger
from localcluster.scheduler.podconditions import ConditionReporter, bind
from localcluster.scheduler.predicates import is_active, select_node

if TYPE_CHECKING:
    from localcluster.client.api import ClusterClient

logger = logging.getLogger(__name__)

SCHEDULER_NAME = "scheduler-plugins-scheduler"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
NO_NODES = "no nodes available to schedule pods"
# The longest the worker sleeps without news (it wakes for waits and back-offs as they end).
IDLE_SECONDS = 1.0


def go_duration(seconds: float) -> str:
    """A duration as Go prints it ("10s", "1m0s", "1.5s", "500ms")."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    tail = f"{secs + (seconds - whole):g}s"
    if hours:
        return f"{hours}h{minutes}m{tail}"
    if minutes:
        return f"{minutes}m{tail}"
    return tail


def fit_error(node_count: int, message: str, post_filter: str) -> str:
    """kube-scheduler's FitError text: "0/<n> nodes are available: <why>. <PostFilter>."."""
    text = (
        message if message.startswith("0/") else f"0/{node_count} nodes are available: {message}."
    )
    return f"{text} {post_filter}." if post_filter else text


@dataclass
class _Waiting:
    pod: Obj
    node: str
    group: str
    deadline: float  # on the scheduler's clock
    wait_seconds: float


class CoschedulingScheduler:
    """Binds pending pods whose schedulerName is ``name``, a gang at a time."""

    def __init__(
        self,
        client: ClusterClient,
        *,
        ledger: NodeLedger,
        args: CoschedulingArgs | None = None,
        name: str = SCHEDULER_NAME,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.args = args or CoschedulingArgs()
        self.ledger = ledger
        self._client = client
        self._clock = clock
        self._cond = threading.Condition(threading.RLock())
        self._pending: dict[str, Obj] = {}  # this profile's unbound pods
        self._members: dict[str, set[str]] = {}  # group key -> pod keys, any scheduler
        self._group_of: dict[str, str] = {}
        self._assumed: set[str] = set()  # assumed by this scheduler, not yet seen bound
        self._waiting: dict[str, _Waiting] = {}  # assumed and held at Permit
        self._allowed: list[_Waiting] = []  # let go at Permit: to bind
        self._rejected: list[tuple[str, _Waiting, str]] = []  # to fail: key, wait, why
        self._specs: dict[str, tuple[str, PodGroupSpec]] = {}  # key -> (resourceVersion, spec)
        self._reporter = ConditionReporter(client, name)
        self.podgroups = Informer(client, PODGROUPS, self._on_podgroup)
        self.manager = PodGroupManager(self, float(self.args.permit_waiting_time_seconds), clock)
        self.plugin = Coscheduling(self.manager, self, self.args)
        self._queue = SchedulingQueue(self._sort_key, clock, time.time)
        ledger.add_pod_listener(self._on_pod)
        ledger.add_node_listener(self._on_node)
        self._threads: list[threading.Thread] = []
        self._paused = False

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = self.ledger.start(stop_event) + [self.podgroups.start(stop_event)]
        worker = threading.Thread(
            target=self._run, args=(stop_event,), name=f"scheduler-{self.name}", daemon=True
        )
        worker.start()
        threads.append(worker)
        self._threads += threads
        return threads

    def join(self, timeout: float | None = None) -> None:
        with self._cond:
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout)

    def pause(self) -> None:
        """Stop taking pods from the queue (test hook: let pods pile up, then ``resume``)."""
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        """Take pods again, once everything committed so far has reached the queue."""
        self.ledger.sync()
        self.podgroups.sync()
        with self._cond:
            self._paused = False
            self._cond.notify()

    def waiting_pods(self) -> list[str]:
        """Keys of the pods held at Permit (for tests and the demo)."""
        with self._cond:
            return sorted(self._waiting)

    # -- what the plugin reads (GroupView) and does (WaitingPods) -------------------------------

    def podgroup(self, key: str) -> PodGroupSpec | None:
        obj = self.podgroups.get(key)
        if obj is None:
            return None
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        with self._cond:
            cached = self._specs.get(key)
            if cached is not None and cached[0] == rv:
                return cached[1]
            spec = PodGroupSpec.parse(obj)
            self._specs[key] = (rv, spec)
            return spec

    def member_count(self, key: str) -> int:
        with self._cond:
            return len(self._members.get(key, ()))

    def assigned_count(self, key: str, excluding: str = "") -> int:
        with self._cond:
            members = list(self._members.get(key, ()))
        node_of = self.ledger.node_of
        return sum(1 for k in members if k != excluding and node_of(k) is not None)

    def free_per_node(self, group: str) -> list[dict[str, Fraction]]:
        with self._cond:
            members = list(self._members.get(group, ()))
        return self.ledger.free_per_node(members)

    def waiting_in_group(self, group: str) -> list[str]:
        with self._cond:
            return sorted(k for k, w in self._waiting.items() if w.group == group)

    def allow(self, pod_key: str) -> None:
        with self._cond:
            waiting = self._waiting.pop(pod_key, None)
            if waiting is not None:
                self._allowed.append(waiting)

    def reject(self, pod_key: str, message: str) -> None:
        with self._cond:
            waiting = self._waiting.pop(pod_key, None)
            if waiting is not None:
                self._rejected.append((pod_key, waiting, message))
                self._cond.notify()

    def activate_group(self, group: str, but: str) -> None:
        with self._cond:
            self._queue.activate(k for k in self._members.get(group, ()) if k != but)
            self._cond.notify()

    # -- informer handlers ------------------------------------------------------------------

    def _needs_scheduling(self, pod: Obj) -> bool:
        spec = pod.get("spec") or {}
        return (
            spec.get("schedulerName") == self.name
            and not spec.get("nodeName")
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
            and is_active(pod)
        )

    def _on_pod(self, event_type: str, pod: Obj, old: Obj | None) -> None:
        key = object_key(pod)
        deleted = event_type == "DELETED"
        group = "" if deleted else group_key(pod)
        with self._cond:
            previous = self._group_of.get(key, "")
            if previous != group:
                if previous:
                    self._members[previous].discard(key)
                    if not self._members[previous]:
                        del self._members[previous]
                if group:
                    self._members.setdefault(group, set()).add(key)
                    self._group_of[key] = group
                else:
                    self._group_of.pop(key, None)
            if not deleted and self._needs_scheduling(pod):
                self._pending[key] = pod
                if key not in self._assumed:
                    self._queue.add(key)
            else:
                self._pending.pop(key, None)
                self._queue.forget(key)
                if deleted and key in self._waiting:
                    self.reject(key, "removed")
                else:
                    self._assumed.discard(key)
            finished = old is not None and is_active(old) and not is_active(pod)
            if event_type == "ADDED" or deleted or finished:
                self._queue.move_all()  # a new sibling, or room freed
            self._cond.notify()
        if deleted or (pod.get("spec") or {}).get("nodeName"):
            self._reporter.forget(key)

    def _on_node(self, _event_type: str, _node: Obj, _old: Obj | None) -> None:
        with self._cond:
            self._queue.move_all()
            self._cond.notify()

    def _on_podgroup(self, event_type: str, podgroup: Obj, _old: Obj | None) -> None:
        with self._cond:
            if event_type == "DELETED":
                self._specs.pop(object_key(podgroup), None)
                return
            if event_type == "ADDED":  # its pods now sort by its creation time
                self._queue.resort(self._members.get(object_key(podgroup), ()))
            self._queue.move_all()
            self._cond.notify()

    # -- the worker ---------------------------------------------------------------------------

    def _sort_key(self, key: str, first_queued: float) -> tuple[int, float, str]:
        return self.plugin.sort_key(self._pending.get(key) or {}, first_queued)

    def _run(self, stop_event: threading.Event) -> None:
        self.ledger.wait_for_sync()
        self.podgroups.wait_for_sync()
        while not stop_event.is_set():
            try:
                self._step()
            except Exception:  # noqa: BLE001 - nothing may stop the loop
                logger.exception("%s: scheduling step failed", self.name)
                stop_event.wait(IDLE_SECONDS)

    def _step(self) -> None:
        """Settle the waits, then one scheduling cycle, or sleep until there is work."""
        self._settle()
        with self._cond:
            key = None if self._paused else self._queue.pop()
            pod = self._pending.get(key) if key is not None else None
            if key is None:
                self._cond.wait(self._idle_seconds())
                return
        if pod is None:
            return
        try:
            self._schedule_one(key, pod)
        except Exception:  # noqa: BLE001 - one pod must never stop the loop
            logger.exception("%s: scheduling %s failed", self.name, key)
            with self._cond:
                if key in self._pending:
                    self._queue.failed(key)

    def _idle_seconds(self) -> float:
        now = self._clock()
        due = [w.deadline for w in self._waiting.values()]
        next_due = self._queue.next_due()
        if next_due is not None:
            due.append(next_due)
        if not due:
            return IDLE_SECONDS
        return min(IDLE_SECONDS, max(0.001, min(due) - now))

    def _settle(self) -> None:
        """Time out ended waits, bind the pods let go, fail the rejected (whose Unreserve may
        reject more), until nothing is left to do."""
        while True:
            with self._cond:
                if not self._allowed and not self._rejected and self._waiting:
                    # one wait ends at a time: its Unreserve rejects its siblings first
                    key, waiting = min(self._waiting.items(), key=lambda kw: kw[1].deadline)
                    if waiting.deadline <= self._clock():
                        wait = go_duration(waiting.wait_seconds)
                        why = (
                            f"rejected due to timeout after waiting {wait} at plugin {PLUGIN_NAME}"
                        )
                        self.reject(key, why)
                allowed, self._allowed = self._allowed, []
                rejected, self._rejected = self._rejected, []
            if not allowed and not rejected:
                return
            for waiting in sorted(allowed, key=lambda w: object_key(w.pod)):
                self._bind(object_key(waiting.pod), waiting.pod, waiting.node)
            for key, waiting, message in rejected:
                self._fail_assumed(key, waiting.pod, f"0/1 nodes are available: 1 {message}.")

    # -- one scheduling cycle ---------------------------------------------------------------------

    def _schedule_one(self, key: str, pod: Obj) -> None:
        with self.ledger.locked() as infos:
            node_count = len(infos)
        if node_count == 0:
            self._fail(key, pod, NO_NODES)
            return
        refusal = self.plugin.pre_filter(pod)
        if refusal is not None:
            self._fail(key, pod, fit_error(node_count, refusal, self.plugin.post_filter(pod)))
            return
        try:
            with self.ledger.locked() as infos:
                chosen, message = select_node(pod, infos)
                if chosen is not None:
                    with self._cond:
                        self._assumed.add(key)
                    self.ledger.assume(pod, chosen.name)
        except Exception as err:  # noqa: BLE001 - a malformed pod: report it, never stop
            self._fail(key, pod, f"cannot evaluate pod {key}: {err}", REASON_SCHEDULER_ERROR)
            return
        if chosen is None:
            self._fail(key, pod, fit_error(len(infos), message, self.plugin.post_filter(pod)))
            return
        result = self.plugin.permit(pod, key)
        if result.code == Code.SUCCESS:
            self._bind(key, pod, chosen.name)
        elif result.code == Code.WAIT:
            logger.debug("%s: %s waits on %s", self.name, key, chosen.name)
            deadline = self._clock() + result.wait_seconds
            with self._cond:
                waiting = _Waiting(pod, chosen.name, group_key(pod), deadline, result.wait_seconds)
                self._waiting[key] = waiting
        else:
            self._unassume(key)
            self.plugin.unreserve(pod)
            self._fail(key, pod, f"0/1 nodes are available: 1 {result.message}.")

    def _fail(self, key: str, pod: Obj, message: str, reason: str = REASON_UNSCHEDULABLE) -> None:
        with self._cond:
            if key not in self._pending:
                return  # deleted or bound meanwhile
            self._queue.failed(key)
        logger.debug("%s: %s unschedulable: %s", self.name, key, message)
        self._reporter.report(pod, reason, message, "FailedScheduling")

    def _unassume(self, key: str) -> None:
        self.ledger.forget(key)
        with self._cond:
            self._assumed.discard(key)

    def _fail_assumed(self, key: str, pod: Obj, message: str) -> None:
        """An assumed pod's binding cycle failed: give its room back (an event for the other
        pods), let Unreserve reject its waiting siblings, and requeue it."""
        self._unassume(key)
        with self._cond:
            self._queue.move_all()
        self.plugin.unreserve(pod)
        self._fail(key, pod, message)

    def _bind(self, key: str, pod: Obj, node_name: str) -> None:
        err = bind(self._client, key, pod, node_name, self.name)
        if err is not None:  # deleted or bound meanwhile
            logger.info("%s: binding %s to %s failed: %s", self.name, key, node_name, err)
            self._fail_assumed(key, pod, f"0/1 nodes are available: 1 {err}.")
            return
        logger.debug("%s: bound %s to %s", self.name, key, node_name)
