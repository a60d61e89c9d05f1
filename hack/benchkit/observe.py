"""When each pod, service and job state is first seen, from watches in this process (the
emulator's registry, or ``cluster.client`` on the real control plane).

Timestamps are this process's monotonic clock at the moment the watch event is handled
(creationTimestamps are second-granular, far too coarse).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from benchkit.cluster import PODS, SERVICES, TFJOBS

log = logging.getLogger(__name__)


@dataclass
class JobTimes:
    created: float = 0.0
    pods: dict[str, float] = field(default_factory=dict)
    services: dict[str, float] = field(default_factory=dict)
    succeeded: float | None = None
    failed: bool = False

    def all_objects_at(self, replicas: int) -> float | None:
        """When the last of its pods and services appeared; None until all did."""
        if len(self.pods) < replicas or len(self.services) < replicas:
            return None
        return max(max(self.pods.values()), max(self.services.values()))

    def all_pods_at(self, replicas: int) -> float | None:
        return max(self.pods.values()) if len(self.pods) >= replicas else None


class Observer:
    """Watches pods, services and TFJobs of ``default``; ``wait`` blocks on a predicate."""

    def __init__(self, source: Any, replicas: int) -> None:
        """``source`` is the emulator's registry or a ``ClusterClient`` (either backend)."""
        self._registry = source
        self.replicas = replicas
        self.jobs: dict[str, JobTimes] = {}
        self.pods_seen = self.services_seen = 0
        self.pods_deleted = self.services_deleted = 0
        self.succeeded = self.failed = 0
        self.last_object = 0.0
        self.last_success = 0.0
        self.changed = threading.Condition()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def expect(self, name: str) -> JobTimes:
        """Register a job about to be created, stamped now."""
        times = self.jobs[name] = JobTimes(created=time.monotonic())
        return times

    def start(self) -> Observer:
        for gvr, handler in ((PODS, self._on_pod), (SERVICES, self._on_service)):
            self._spawn(gvr, handler)
        self._spawn(TFJOBS, self._on_job)
        return self

    def _spawn(self, gvr: tuple[str, str, str], handler: Any) -> None:
        watch = self._registry.watch(gvr, "default")
        thread = threading.Thread(
            target=self._loop, args=(watch, handler), name=f"observe-{gvr[2]}", daemon=True
        )
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(3)

    def _loop(self, watch: Any, handler: Any) -> None:
        # a registry watch hands out events with ``get``, a client's stream with ``get_shared``
        get = getattr(watch, "get_shared", None) or watch.get
        try:
            while not self._stop.is_set():
                item = get(0.2)
                if item is None:
                    if watch.closed:
                        log.error("observer watch closed: %s", getattr(watch, "close_reason", ""))
                        return
                    continue
                handler(item[0], item[1], time.monotonic())
        finally:
            watch.stop()

    def _job_of(self, obj: dict[str, Any]) -> JobTimes | None:
        name = ((obj.get("metadata") or {}).get("labels") or {}).get("tf-job-name")
        return self.jobs.get(name) if name else None

    def _on_pod(self, etype: str, obj: dict[str, Any], now: float) -> None:
        self._on_object(etype, obj, now, "pods")

    def _on_service(self, etype: str, obj: dict[str, Any], now: float) -> None:
        self._on_object(etype, obj, now, "services")

    def _on_object(self, etype: str, obj: dict[str, Any], now: float, kind: str) -> None:
        job = self._job_of(obj)
        if job is None:
            return
        name = obj["metadata"]["name"]
        seen = job.pods if kind == "pods" else job.services
        with self.changed:
            if etype == "ADDED" and name not in seen:
                seen[name] = now
                setattr(self, f"{kind}_seen", getattr(self, f"{kind}_seen") + 1)
                self.last_object = now
            elif etype == "DELETED":
                setattr(self, f"{kind}_deleted", getattr(self, f"{kind}_deleted") + 1)
            else:
                return
            self.changed.notify_all()

    def _on_job(self, etype: str, obj: dict[str, Any], now: float) -> None:
        job = self.jobs.get(obj["metadata"]["name"])
        if job is None or job.succeeded is not None or job.failed:
            return
        conditions = (obj.get("status") or {}).get("conditions") or []
        true = {c.get("type") for c in conditions if c.get("status") == "True"}
        with self.changed:
            if "Succeeded" in true:
                job.succeeded = now
                self.succeeded += 1
                self.last_success = now
            elif "Failed" in true:
                job.failed = True
                self.failed += 1
            else:
                return
            self.changed.notify_all()

    def all_objects(self) -> bool:
        want = len(self.jobs) * self.replicas
        return self.pods_seen >= want and self.services_seen >= want

    def wait(self, predicate: Any, deadline: float) -> bool:
        with self.changed:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.changed.wait(min(remaining, 0.5))
            return True
