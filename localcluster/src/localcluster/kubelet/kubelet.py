"""One emulated kubelet: registers its Node, runs the pods bound to it, reports status.

Flow: an informer on pods with ``spec.nodeName=<node>`` feeds ``on_pod``. A new
pod gets a loopback IP and a ``PodRecord``; each container is handed to the
runtime, which reports starts and exits back (``container_started`` /
``container_exited``). The kubelet decides restarts (``podstatus.apply_exit``)
and schedules them on the shared ``TimerQueue`` after the container's back-off
(``backoff``: at once, then doubling up to a maximum, ``CrashLoopBackOff``). A pod whose deletionTimestamp
appears is stopped with its grace period and then removed with
``gracePeriodSeconds=0``, as the real kubelet finishes graceful deletion.

All state sits behind one lock; API writes happen only in the status worker
thread (a dirty set drained by ``sync_dirty``), so writes for one pod are never
reordered and no client call is made while the lock is held.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

from localcluster.apimachinery.objects import format_time
from localcluster.client.api import ClusterClient
from localcluster.client.events import record_event
from localcluster.client.informer import PODS, Informer
from localcluster.kubelet.backoff import DEFAULT_INITIAL, DEFAULT_MAX, RestartBackOff, go_duration
from localcluster.kubelet.ipam import IPAllocator
from localcluster.kubelet.node import NodeConfig, register_node, renew_lease, report_status
from localcluster.kubelet.podstatus import (
    RUNNING,
    ContainerRecord,
    PodRecord,
    apply_exit,
    back_off,
    build_status,
    mark_running,
)
from localcluster.kubelet.probes import Prober
from localcluster.kubelet.runtime import ContainerRuntime, LogRequest
from localcluster.kubelet.timers import TimerQueue

logger = logging.getLogger(__name__)

DEFAULT_RESTART_DELAY = DEFAULT_INITIAL
LEASE_RENEW_SECONDS = 10.0
_PROBE_NAMES = {
    "readinessProbe": "Readiness",
    "livenessProbe": "Liveness",
    "startupProbe": "Startup",
}


class Kubelet:
    """Runs the pods the scheduler binds to ``node.name`` with ``runtime``."""

    def __init__(
        self,
        client: ClusterClient,
        node: NodeConfig,
        runtime: ContainerRuntime,
        ips: IPAllocator,
        timers: TimerQueue,
        restart_delay: float = DEFAULT_RESTART_DELAY,
        events: bool = True,
        max_restart_delay: float = DEFAULT_MAX,
    ) -> None:
        self.client = client
        self.node = node
        self.runtime = runtime
        self.timers = timers
        self._ips = ips
        self._backoff = RestartBackOff(restart_delay, max_restart_delay, timers.clock.monotonic)
        self._lock = threading.RLock()
        self._records: dict[str, PodRecord] = {}
        self._dirty: set[str] = set()
        self._to_delete: dict[str, str] = {}  # pod key -> uid to finish deleting
        self._written: dict[str, dict[str, Any]] = {}
        self._emit_events = events
        self._events: list[
            tuple[dict[str, Any], str, str, str]
        ] = []  # (pod, type, reason, message)
        self._wake = threading.Condition(self._lock)
        self._stopping = False
        self._node_obj: dict[str, Any] = {}
        self._status_posted = 0.0  # when the node status was last posted (wall clock)
        self._informer = Informer(
            client, PODS, self.on_pod, field_selector=f"spec.nodeName={node.name}"
        )
        self._prober: Prober | None = None
        if getattr(runtime, "supports_probes", False):
            self._prober = Prober(
                timers, self.probe_result, getattr(runtime, "exec_in_container", None)
            )
        runtime.attach(self)

    # -- lifecycle --------------------------------------------------------------

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        self._node_obj = register_node(self.client, self.node)
        self._status_posted = time.time()
        threads = [
            self.timers.start(stop_event, name=f"kubelet-timers-{self.node.name}"),
            self._informer.start(stop_event),
        ]
        worker = threading.Thread(
            target=self._status_loop,
            args=(stop_event,),
            name=f"kubelet-{self.node.name}",
            daemon=True,
        )
        worker.start()
        threads.append(worker)
        self._schedule_lease()
        return threads

    def _schedule_lease(self) -> None:
        if self._stopping:
            return
        self.heartbeat()
        self.timers.call_later(LEASE_RENEW_SECONDS, self._schedule_lease)

    def heartbeat(self) -> None:
        """Renew the node's Lease and report its status when due (see ``node``)."""
        renew_lease(self.client, self._node_obj)
        self._status_posted = report_status(
            self.client, self.node, self._status_posted, time.time()
        )

    def shutdown(self) -> None:
        """Kill every container; pods keep their last reported status."""
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
        if self._prober is not None:
            self._prober.close()
        self.runtime.close()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._informer.wait_for_sync(timeout)

    # -- pod events (informer thread) --------------------------------------------

    def on_pod(self, event_type: str, pod: dict[str, Any], _old: dict[str, Any] | None) -> None:
        meta = pod["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        with self._lock:
            record = self._records.get(key)
            if record is not None and record.uid != meta.get("uid"):
                self._forget(record)  # same name, new pod
                record = None
            if event_type == "DELETED":
                if record is not None:
                    self._forget(record)
                return
            if record is None:
                if meta.get("deletionTimestamp"):
                    self._request_delete(key, meta.get("uid"))
                elif (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                    self._admit(key, pod)
                return
            record.pod = pod
            if meta.get("deletionTimestamp"):
                grace = float(meta.get("deletionGracePeriodSeconds") or 0)
                if not record.terminating or grace < record.grace_seconds:
                    self._terminate(record, grace)  # first request, or a shorter grace period

    def _admit(self, key: str, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        now = self.timers.clock.wall()
        record = PodRecord(
            namespace=meta["namespace"],
            name=meta["name"],
            uid=meta.get("uid", ""),
            pod=pod,
            pod_ip=self._ips.allocate(),
            host_ip=self.node.address,
            start_time=format_time(now),
        )
        for spec in (pod.get("spec") or {}).get("containers") or []:
            record.containers[spec["name"]] = ContainerRecord(
                name=spec["name"], image=spec.get("image", "")
            )
        self._records[key] = record
        self._mark_dirty(key)
        for spec in (pod.get("spec") or {}).get("containers") or []:
            self.runtime.start_container(record, spec, 0)
        logger.debug("kubelet %s admitted %s with IP %s", self.node.name, key, record.pod_ip)

    def _stop_probes(self, record: PodRecord, container: str | None = None) -> None:
        if self._prober is not None:
            for name in [container] if container else list(record.containers):
                self._prober.stop(record.key, name)

    def _terminate(self, record: PodRecord, grace: float) -> None:
        self._stop_probes(record)
        record.terminating = True
        record.grace_seconds = grace
        for container in record.running():
            self._event(record, "Normal", "Killing", f"Stopping container {container.name}")
        for container in record.containers.values():
            container.restart_pending = False
        self.runtime.stop_pod(record, grace)  # also cancels starts still pending
        self._finish_if_stopped(record)

    def _finish_if_stopped(self, record: PodRecord) -> None:
        # deleted at once, with no terminal phase written first (a real kubelet writes one):
        # divergence D107
        if record.terminating and not record.running():
            self._request_delete(record.key, record.uid)

    def _forget(self, record: PodRecord) -> None:
        self._stop_probes(record)
        self._backoff.forget(f"{record.uid}/")
        self._records.pop(record.key, None)
        self._dirty.discard(record.key)
        self._written.pop(record.key, None)
        self.runtime.remove_pod(record)
        self._ips.release(record.pod_ip)

    # -- runtime callbacks (timer / reaper threads) ---------------------------

    def container_started(self, pod_key: str, container: str, container_id: str) -> None:
        with self._lock:
            record = self._records.get(pod_key)
            if record is None or container not in record.containers or record.terminating:
                return
            state = record.containers[container]
            mark_running(state, self.timers.clock.wall(), container_id)
            self._event(record, "Normal", "Started", f"Started container {container}")
            spec = self._container_spec(record, container)
            if self._prober is not None and spec is not None:
                state.ready = False if Prober.has(spec, "readinessProbe") else None
                state.started = False if Prober.has(spec, "startupProbe") else None
                self._prober.start(pod_key, record.pod_ip, spec)
            self._mark_dirty(pod_key)

    @staticmethod
    def _container_spec(record: PodRecord, name: str) -> dict[str, Any] | None:
        containers = (record.pod.get("spec") or {}).get("containers") or []
        return next((c for c in containers if c.get("name") == name), None)

    def probe_result(
        self, pod_key: str, container: str, kind: str, ok: bool | None, message: str
    ) -> None:
        """From the prober's threads: a failed attempt (``ok`` None: an Unhealthy event) or a
        verdict (readiness; or a kill when liveness or startup failed)."""
        with self._lock:
            record = self._records.get(pod_key)
            state = record.containers.get(container) if record is not None else None
            if record is None or state is None or state.state != RUNNING or record.terminating:
                return
            if ok is None:
                what = _PROBE_NAMES[kind]
                self._event(record, "Warning", "Unhealthy", f"{what} probe failed: {message}")
                return
            if kind == "readinessProbe":
                state.ready = ok
            elif kind == "startupProbe" and ok:
                state.started = True
            elif not ok:  # liveness or startup failed: kill, the restart policy decides
                verb = "liveness" if kind == "livenessProbe" else "startup"
                self._event(
                    record,
                    "Normal",
                    "Killing",
                    f"Container {container} failed {verb} probe, will be restarted",
                )
                grace = float(
                    (record.pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
                )
                self.runtime.stop_container(record, container, grace)
            self._mark_dirty(pod_key)

    def container_exited(
        self,
        pod_key: str,
        container: str,
        container_id: str,
        exit_code: int,
        reason: str | None = None,
        message: str = "",
    ) -> None:
        with self._lock:
            record = self._records.get(pod_key)
            if record is None or container not in record.containers:
                return
            state = record.containers[container]
            if state.state == RUNNING and state.container_id != container_id:
                return  # report about an older attempt
            self._stop_probes(record, container)
            now = self.timers.clock.wall()
            if state.container_id != container_id:
                state.container_id = container_id  # failed before it ever ran
            if reason in ("ContainerCannotRun", "CreateContainerConfigError"):
                self._event(record, "Warning", "Failed", f"Error: {message}")
            if apply_exit(record, state, exit_code, now, reason, message):
                wait = self._backoff.wait(
                    f"{record.uid}/{container}", self.timers.clock.monotonic()
                )
                if wait > 0:
                    pod = f"{record.name}_{record.namespace}({record.uid})"
                    back_off(
                        state,
                        f"back-off {go_duration(wait)} restarting failed container={container} pod={pod}",
                    )
                    text = f"Back-off restarting failed container {container} in pod {pod}"
                    self._event(record, "Warning", "BackOff", text)
                self.timers.call_later(wait, lambda: self._restart(record, container))
            self._mark_dirty(pod_key)
            self._finish_if_stopped(record)

    def _restart(self, record: PodRecord, container: str) -> None:
        with self._lock:
            state = record.containers.get(container)
            if self._records.get(record.key) is not record or state is None:
                return
            if record.terminating or not state.restart_pending:
                return
            self._backoff.restarted(f"{record.uid}/{container}")
            state.restart_count += 1
            state.restart_pending = False
            spec = next(c for c in record.pod["spec"]["containers"] if c["name"] == container)
            self.runtime.start_container(record, spec, state.restart_count)
            self._mark_dirty(record.key)

    # -- status manager ---------------------------------------------------------

    def _event(self, record: PodRecord, kind: str, reason: str, message: str) -> None:
        if self._emit_events:
            self._events.append((record.pod, kind, reason, message))
            self._wake.notify_all()

    def _mark_dirty(self, key: str) -> None:
        self._dirty.add(key)
        self._wake.notify_all()

    def _request_delete(self, key: str, uid: str | None) -> None:
        self._to_delete[key] = uid or ""
        self._wake.notify_all()

    def _status_loop(self, stop_event: threading.Event) -> None:
        while not stop_event.is_set():
            with self._lock:
                if not (self._dirty or self._to_delete or self._events or self._stopping):
                    self._wake.wait(0.5)
                if self._stopping:
                    return
            self.sync_dirty()

    def sync_dirty(self) -> int:
        """Write every pending status and finish pending deletions; returns the write count."""
        with self._lock:
            statuses = []
            for key in sorted(self._dirty):
                record = self._records.get(key)
                if record is None or key in self._to_delete:
                    continue
                status = build_status(record, self.timers.clock.wall())
                if self._written.get(key) != status:
                    statuses.append((record, status))
            self._dirty.clear()
            deletions, self._to_delete = self._to_delete, {}
            events, self._events = self._events, []
        for pod, kind, reason, message in events:
            record_event(self.client, pod, kind, reason, message, "kubelet", self.node.name)
        for record, status in statuses:
            self._write_status(record, status)
        for key, uid in deletions.items():
            self._finish_deletion(key, uid)
        return len(statuses) + len(deletions)

    def _write_status(self, record: PodRecord, status: dict[str, Any]) -> None:
        # the pod as last seen with the new status and no resourceVersion: a new dict for each
        # part that differs, the rest shared (the API server copies what it stores)
        meta = {k: v for k, v in record.pod["metadata"].items() if k != "resourceVersion"}
        body = {**record.pod, "metadata": meta, "status": status}
        try:
            self.client.update(
                PODS, record.namespace, record.name, body, subresource="status", shared=True
            )
        except Exception as err:  # noqa: BLE001 - pod gone: the DELETED event cleans up
            logger.debug("status update of %s failed: %s", record.key, err)
            return
        with self._lock:
            if self._records.get(record.key) is record:
                self._written[record.key] = status

    def _finish_deletion(self, key: str, uid: str) -> None:
        namespace, name = key.split("/", 1)
        try:
            self.client.delete(
                PODS,
                namespace,
                name,
                grace_period_seconds=0,
                preconditions={"uid": uid} if uid else None,
            )
        except Exception as err:  # noqa: BLE001 - already gone
            logger.debug("finishing deletion of %s: %s", key, err)

    # -- introspection -----------------------------------------------------------

    def record(self, key: str) -> PodRecord | None:
        with self._lock:
            return self._records.get(key)

    def pod_count(self) -> int:
        with self._lock:
            return len(self._records)

    def container_names(self, namespace: str, name: str) -> list[str] | None:
        """The containers of a pod this kubelet runs; None if it does not run it."""
        with self._lock:
            record = self._records.get(f"{namespace}/{name}")
            return None if record is None else list(record.containers)

    def logs(
        self, namespace: str, name: str, container: str | None, request: LogRequest
    ) -> Iterator[bytes] | None:
        """Log bytes of a container of a pod this kubelet runs; None if it does not run it."""
        with self._lock:
            record = self._records.get(f"{namespace}/{name}")
        if record is None:
            return None
        if container is None:
            container = next(iter(record.containers), "")
        return self.runtime.logs(record, container, request)
