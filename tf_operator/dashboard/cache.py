"""What the dashboard knows about the cluster: informer caches plus change notifications.

Two shared informers (the project's own, :mod:`tf_operator.k8s.informers`) mirror the TFJobs
and the pods labelled ``group-name=kubeflow.org``; pages read from these caches, never from
the API. Every change is turned into a :class:`Change` naming the namespace and job, and handed
to each subscriber whose filter wants it. Subscribers are the web server's open event streams:
their ``deliver`` only schedules the notice on the server's loop (``call_soon_threadsafe``), so
a slow browser never blocks an informer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tf_operator.apis.tensorflow.v1.constants import GROUP_NAME
from tf_operator.k8s.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    ResourceEventHandlerFuncs,
)
from tf_operator.k8s.client import PODS, KubeClient
from tf_operator.k8s.informers import SharedInformerFactory
from tf_operator.sdk.client import LABEL_GROUP_NAME, LABEL_JOB_NAME, TFJOBS, replica_order

log = logging.getLogger(__name__)

JOB_INDEX = "tfjob"
SYNC_TIMEOUT = 60.0


@dataclass(frozen=True)
class Change:
    kind: str  # "job" or "pod"
    namespace: str
    job: str  # the TFJob's name (for a pod: its tf-job-name label)
    deleted: bool = False


def _job_index(pod: Any) -> list[str]:
    meta = pod.get("metadata") or {}
    job = (meta.get("labels") or {}).get(LABEL_JOB_NAME)
    return [f"{meta.get('namespace')}/{job}"] if job else []


def _object(obj: Any) -> Any:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


Deliver = Callable[[Change], None]


class ClusterCache:
    """TFJobs and their pods, cached by informers; ``subscribe`` for change notices."""

    def __init__(self, kube: KubeClient, namespace: str | None = None) -> None:
        self._jobs_factory = SharedInformerFactory(kube, 0, namespace=namespace)
        self._pods_factory = SharedInformerFactory(
            kube, 0, namespace=namespace, label_selector=f"{LABEL_GROUP_NAME}={GROUP_NAME}"
        )
        self._jobs = self._jobs_factory.for_resource(TFJOBS)
        self._pods = self._pods_factory.for_resource(PODS)
        self._pods.add_indexers({JOB_INDEX: _job_index})
        self._subscribers: dict[int, tuple[Callable[[Change], bool], Deliver]] = {}
        self._next_token = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._jobs.add_event_handler(
            ResourceEventHandlerFuncs(
                add=lambda o: self._job_changed(o),
                update=lambda _, o: self._job_changed(o),
                delete=lambda o: self._job_changed(o, deleted=True),
            )
        )
        self._pods.add_event_handler(
            ResourceEventHandlerFuncs(
                add=self._pod_changed,
                update=lambda _, o: self._pod_changed(o),
                delete=self._pod_changed,
            )
        )

    # ---- lifecycle --------------------------------------------------------------------------
    def start(self) -> bool:
        """Start the informers; True once both caches synced (within ``SYNC_TIMEOUT``)."""
        self._jobs_factory.start(self._stop)
        self._pods_factory.start(self._stop)
        synced = [
            all(f.wait_for_cache_sync(self._stop, SYNC_TIMEOUT).values())
            for f in (self._jobs_factory, self._pods_factory)
        ]
        return all(synced)

    def stop(self) -> None:
        self._stop.set()
        self._jobs_factory.join(5)
        self._pods_factory.join(5)

    # ---- reading ----------------------------------------------------------------------------
    def jobs(self, namespace: str) -> list[dict[str, Any]]:
        items = self._jobs.get_indexer().by_index(NAMESPACE_INDEX, namespace)
        return sorted(
            items,
            key=lambda j: (j["metadata"].get("creationTimestamp") or "", j["metadata"]["name"]),
            reverse=True,
        )

    def job(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._jobs.get_indexer().get_by_key(f"{namespace}/{name}")

    def pods(self, namespace: str, job: str) -> list[dict[str, Any]]:
        return sorted(
            self._pods.get_indexer().by_index(JOB_INDEX, f"{namespace}/{job}"), key=replica_order
        )

    # ---- notifications ----------------------------------------------------------------------
    def subscribe(self, wants: Callable[[Change], bool], deliver: Deliver) -> int:
        """Call ``deliver(change)`` (from an informer thread: it must not block) for every
        change ``wants`` accepts; returns a token for :meth:`unsubscribe`."""
        with self._lock:
            self._next_token += 1
            self._subscribers[self._next_token] = (wants, deliver)
            return self._next_token

    def unsubscribe(self, token: int) -> None:
        with self._lock:
            self._subscribers.pop(token, None)

    def _publish(self, change: Change) -> None:
        with self._lock:
            subscribers = list(self._subscribers.items())
        for token, (wants, deliver) in subscribers:
            if not wants(change):
                continue
            try:
                deliver(change)
            except RuntimeError:  # its event loop closed: the server is stopping
                self.unsubscribe(token)

    def _job_changed(self, obj: Any, deleted: bool = False) -> None:
        meta = (_object(obj) or {}).get("metadata") or {}
        self._publish(Change("job", meta.get("namespace", ""), meta.get("name", ""), deleted))

    def _pod_changed(self, obj: Any) -> None:
        meta = (_object(obj) or {}).get("metadata") or {}
        job = (meta.get("labels") or {}).get(LABEL_JOB_NAME)
        if job:
            self._publish(Change("pod", meta.get("namespace", ""), job))
