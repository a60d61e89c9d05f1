"""The default scheduler loop: watch pods and nodes, bind what fits, report what does not.

Design: two informers feed one lock-protected cache (``NodeInfo`` per node with
the requests of its active bound pods) and an active queue of pending pod keys.
One worker thread pops a key, runs the pure predicates from ``predicates``,
"assumes" the pod on the chosen node (so the next decision already counts it)
and calls ``registry.bind_pod``. A pod that fits nowhere gets the condition
``PodScheduled=False/Unschedulable`` and waits in the unschedulable set until a
node or pod change (or the periodic retry) moves it back to the active queue.
Pods that name another scheduler (kube-batch, volcano) are never touched.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections import deque

from localcluster.controllers.events import now_rfc3339, record_event
from localcluster.controllers.informer import (
    NODES,
    PODS,
    RegistryInformer,
    object_key,
)
from localcluster.scheduler.predicates import NodeInfo, is_active, select_node

logger = logging.getLogger(__name__)

SCHEDULER_NAME = "default-scheduler"
# Unschedulable pods are retried at least this often even without cluster changes.
DEFAULT_RETRY_SECONDS = 5.0


def is_responsible(pod: dict) -> bool:
    return (pod.get("spec") or {}).get("schedulerName") in (None, "", SCHEDULER_NAME)


def needs_scheduling(pod: dict) -> bool:
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

    def __init__(self, registry, retry_seconds: float = DEFAULT_RETRY_SECONDS) -> None:
        self._registry = registry
        self._retry_seconds = retry_seconds
        self._cond = threading.Condition()
        self._nodes: dict[str, NodeInfo] = {}
        self._bound: dict[str, tuple[str, dict]] = {}  # pod key -> (node name, pod counted)
        self._pending: dict[str, dict] = {}  # pod key -> latest unbound pod
        self._queue: deque[str] = deque()
        self._queued: set[str] = set()
        self._unschedulable: set[str] = set()
        self._pods = RegistryInformer(registry, PODS, self._on_pod)
        self._node_informer = RegistryInformer(registry, NODES, self._on_node)
        self._threads: list[threading.Thread] = []

    def start(self, stop_event: threading.Event) -> None:
        self._threads.append(self._node_informer.start(stop_event))
        self._threads.append(self._pods.start(stop_event))
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

    # -- cache maintenance (informer threads) ---------------------------------

    def _info(self, node_name: str) -> NodeInfo:
        info = self._nodes.get(node_name)
        if info is None:
            info = self._nodes[node_name] = NodeInfo(node={})
        return info

    def _on_node(self, event_type: str, node: dict, _old: dict | None) -> None:
        name = node["metadata"]["name"]
        with self._cond:
            if event_type == "DELETED":
                self._info(name).node = {}
            else:
                self._info(name).node = node
            self._flush_unschedulable()

    def _on_pod(self, event_type: str, pod: dict, _old: dict | None) -> None:
        key = object_key(pod)
        with self._cond:
            self._forget_bound(key)
            node_name = (pod.get("spec") or {}).get("nodeName")
            if event_type == "DELETED" or not is_active(pod) or node_name:
                self._pending.pop(key, None)
                self._unschedulable.discard(key)
                if event_type != "DELETED" and node_name and is_active(pod):
                    self._assume(key, node_name, pod)
                else:
                    self._flush_unschedulable()  # resources were freed
                return
            if needs_scheduling(pod):
                self._pending[key] = pod
                if key not in self._unschedulable:
                    self._enqueue(key)
            else:
                self._pending.pop(key, None)

    def _forget_bound(self, key: str) -> None:
        entry = self._bound.pop(key, None)
        if entry is not None:
            self._info(entry[0]).remove_pod(entry[1])

    def _assume(self, key: str, node_name: str, pod: dict) -> None:
        self._bound[key] = (node_name, pod)
        self._info(node_name).add_pod(pod)

    def _enqueue(self, key: str) -> None:
        if key not in self._queued:
            self._queued.add(key)
            self._queue.append(key)
            self._cond.notify()

    def _flush_unschedulable(self) -> None:
        for key in sorted(self._unschedulable):
            self._enqueue(key)
        self._unschedulable.clear()

    # -- scheduling (worker thread) --------------------------------------------

    def _run(self, stop_event: threading.Event) -> None:
        self._node_informer.wait_for_sync()
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
                if pod is None:
                    continue
                infos = [i for i in self._nodes.values() if i.node]
                chosen, message = select_node(pod, infos)
                if chosen is not None:
                    self._assume(key, chosen.name, pod)
                else:
                    self._unschedulable.add(key)
            try:
                if chosen is not None:
                    self._bind(key, pod, chosen.name)
                else:
                    self._mark_unschedulable(pod, message)
            except Exception:  # noqa: BLE001 - keep scheduling other pods
                logger.exception("scheduling %s failed", key)

    def _bind(self, key: str, pod: dict, node_name: str) -> None:
        meta = pod["metadata"]
        try:
            self._registry.bind_pod(meta["namespace"], meta["name"], node_name)
        except Exception as err:  # noqa: BLE001 - deleted or bound meanwhile: the watch tells
            logger.info("binding %s to %s failed: %s", key, node_name, err)
            with self._cond:
                if self._bound.get(key, ("", None))[1] is pod:
                    self._forget_bound(key)
            return
        logger.debug("bound %s to %s", key, node_name)
        record_event(
            self._registry,
            pod,
            "Normal",
            "Scheduled",
            f"Successfully assigned {key} to {node_name}",
            SCHEDULER_NAME,
        )

    def _mark_unschedulable(self, pod: dict, message: str) -> None:
        conditions = (pod.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if (
            current
            and current.get("status") == "False"
            and current.get("reason") == "Unschedulable"
            and current.get("message") == message
        ):
            return
        updated = copy.deepcopy(pod)
        status = updated.setdefault("status", {})
        status.setdefault("phase", "Pending")
        status["conditions"] = [c for c in conditions if c.get("type") != "PodScheduled"] + [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastProbeTime": None,
                "lastTransitionTime": now_rfc3339(),
            }
        ]
        updated["metadata"].pop("resourceVersion", None)
        meta = updated["metadata"]
        try:
            self._registry.update(
                PODS, meta["namespace"], meta["name"], updated, subresource="status"
            )
        except Exception as err:  # noqa: BLE001 - pod gone or changed: the watch brings it back
            logger.info("could not mark %s unschedulable: %s", object_key(pod), err)
            return
        record_event(self._registry, pod, "Warning", "FailedScheduling", message, SCHEDULER_NAME)
