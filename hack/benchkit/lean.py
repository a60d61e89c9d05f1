"""The lean lifecycle client: the least a Python process on this project's stack spends on
one job lifecycle.

It makes exactly the requests of ``workload.minimum_requests_per_job`` for every TFJob (its
pods and services with one event each, three status writes, the deletion of the still running
PS pods and services with their events, ExitedWithCode for worker 0 and TFJobSucceeded), over
the operator's own REST client (``tf_operator.k8s.client``: the cheapest request this project
has), and it decodes the TFJob and pod watches with the operator's watch decoder, since a
controller must read them to see jobs arrive and worker 0 exit. The service watch is held and
read, not decoded. Nothing else: no informer caches, expectations, workqueue, logging, event
correlation, validation or retries. Whatever the operator spends beyond this client is the
price of being a controller; this client's own figure bounds from below what any Python
operator built on this client can reach (the operator-CPU-per-job budget).

Run by the harness as ``python -m benchkit.lean --kubeconfig PATH``; it runs until SIGTERM.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import queue
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from benchkit.workload import (
    NAMESPACE,
    creation_bodies,
    floor_event,
    job_condition,
    replica_list,
    utc_stamp,
)
from tf_operator.k8s.client.kube import load_kube_client
from tf_operator.k8s.client.resource import EVENTS, PODS, SERVICES, Resource
from tf_operator.k8s.client.rest import ResourceClient

USER_AGENT = "tfop-lean/1"
TFJOBS = Resource("kubeflow.org", "v1", "tfjobs", "TFJob")
Task = Callable[[], None]


def _status(job: dict[str, Any], finished: bool, stamp: str) -> dict[str, Any]:
    """Created, and once finished Succeeded with a completion time, on top of ``job``."""
    name = job["metadata"]["name"]
    status = dict(job.get("status") or {})
    status.setdefault("startTime", stamp)
    conditions = [job_condition("Created", "TFJobCreated", f"TFJob {name} is created.", stamp)]
    if finished:
        message = f"TFJob {name} successfully completed."
        conditions.append(job_condition("Succeeded", "TFJobSucceeded", message, stamp))
        status.setdefault("completionTime", stamp)
    status["conditions"] = conditions
    status.setdefault("replicaStatuses", {})
    return {**job, "status": status}


class LeanLifecycle:
    """Per job: create everything when it appears, finish and clean up when worker 0 exits."""

    def __init__(self, client: Any) -> None:
        self.jobs_api: ResourceClient = client.resource(TFJOBS)
        self.apis: dict[str, ResourceClient] = {
            r.plural: client.resource(r) for r in (PODS, SERVICES, EVENTS)
        }
        self.tasks: queue.Queue[Task] = queue.Queue()
        self._jobs: dict[
            str, dict[str, Any]
        ] = {}  # the newest copy this client wrote or saw, by name
        self._finished: set[str] = set()
        self._job_locks: dict[str, threading.Lock] = {}  # a job's start and finish never overlap
        self._lock = threading.Lock()

    def run(self, threads: int) -> None:
        """``threads`` workers for the tasks, a thread per watch; returns when the TFJob
        watch ends."""
        for i in range(threads):
            threading.Thread(target=self._work, name=f"lean-{i}", daemon=True).start()
        for target in (self.watch_pods, self.drain_services):
            threading.Thread(target=target, name=target.__name__, daemon=True).start()
        self.watch_jobs()

    def _work(self) -> None:
        while True:
            task = self.tasks.get()
            try:
                task()
            except Exception:  # noqa: BLE001 - the job stays unfinished: the run is incomplete
                traceback.print_exc()

    def _job_lock(self, name: str) -> threading.Lock:
        with self._lock:
            return self._job_locks.setdefault(name, threading.Lock())

    def _event(self, job: dict[str, Any], reason: str, message: str) -> None:
        self.apis["events"].create(floor_event(job, reason, message), NAMESPACE)

    def _write_status(self, name: str, finished: bool, stamp: str) -> None:
        with self._lock:
            job = self._jobs[name]
        written = self.jobs_api.update_status(_status(job, finished, stamp), NAMESPACE)
        with self._lock:
            self._jobs[name] = written

    def start(self, job: dict[str, Any]) -> None:
        """Pods and services per replica type, each with its event, then the first status."""
        name = job["metadata"]["name"]
        with self._job_lock(name):
            with self._lock:
                self._jobs[name] = job
            self._create_all(job)
            self._write_status(name, False, utc_stamp())

    def _create_all(self, job: dict[str, Any]) -> None:
        for plural, body in creation_bodies(job, events=True):
            self.apis[plural].create(body, NAMESPACE)

    def finish(self, name: str, exit_code: int) -> None:
        """Worker 0 exited 0: success, then the running PS pods and services go."""
        with self._job_lock(name):
            self._finish(name, exit_code)

    def _finish(self, name: str, exit_code: int) -> None:
        with self._lock:
            job = self._jobs[name]
        stamp = utc_stamp()
        message = f"Pod: {NAMESPACE}.{name}-worker-0 exited with code {exit_code}"
        self._event(job, "ExitedWithCode", message)
        self._write_status(name, True, stamp)
        self._event(job, "TFJobSucceeded", f"TFJob {name} successfully completed.")
        for rtype, index, _ in replica_list(job):
            if rtype != "ps":
                continue
            target = f"{name}-{rtype}-{index}"
            self.apis["pods"].delete(target, NAMESPACE)
            self._event(job, "SuccessfulDeletePod", f"Deleted pod: {target}")
            self.apis["services"].delete(target, NAMESPACE)
            self._event(job, "SuccessfulDeleteService", f"Deleted service: {target}")
        self._write_status(name, True, stamp)

    # ---- watches ----------------------------------------------------------------------

    def watch_jobs(self) -> None:
        """Every TFJob seen for the first time is started by a worker."""
        seen: set[str | None] = set()
        listing = self.jobs_api.list(NAMESPACE)
        items = list(listing.get("items") or [])
        with self.jobs_api.watch(NAMESPACE, listing["metadata"]["resourceVersion"]) as stream:
            for kind, obj in itertools.chain((("ADDED", item) for item in items), stream):
                uid = (obj.get("metadata") or {}).get("uid")
                if kind == "ADDED" and uid not in seen:
                    seen.add(uid)
                    self.tasks.put(functools.partial(self.start, obj))
        raise SystemExit("the TFJob watch ended")

    def watch_pods(self) -> None:
        """Every pod update goes to :meth:`on_pod_update`."""
        listing = self.apis["pods"].list(NAMESPACE)
        with self.apis["pods"].watch(NAMESPACE, listing["metadata"]["resourceVersion"]) as stream:
            for kind, pod in stream:
                if kind == "MODIFIED":
                    self.on_pod_update(pod)
        raise SystemExit("the pod watch ended")

    def on_pod_update(self, pod: dict[str, Any]) -> None:
        """The first time worker 0 of a started job is seen to have exited 0, that job is
        finished by a worker."""
        code = _worker0_exit(pod)
        if code is None:
            return
        name = pod["metadata"]["labels"]["tf-job-name"]
        with self._lock:
            first = name not in self._finished and name in self._jobs
            self._finished.add(name)
        if first:
            self.tasks.put(lambda: self.finish(name, code))

    def drain_services(self) -> None:
        """Held and read like an informer's, so the API server serialises the same events."""
        listing = self.apis["services"].list(NAMESPACE)
        with self.apis["services"].watch(
            NAMESPACE, listing["metadata"]["resourceVersion"]
        ) as stream:
            for _ in stream:
                pass


def _worker0_exit(pod: dict[str, Any]) -> int | None:
    """Worker 0's exit code once it has succeeded, else None."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if labels.get("tf-replica-type") != "worker" or labels.get("tf-replica-index") != "0":
        return None
    status = pod.get("status") or {}
    if status.get("phase") != "Succeeded":
        return None
    for container in status.get("containerStatuses") or []:
        terminated = (container.get("state") or {}).get("terminated")
        if terminated:
            return int(terminated.get("exitCode", 0))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    LeanLifecycle(load_kube_client(args.kubeconfig, user_agent=USER_AGENT)).run(args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
