"""What the dashboard knows about the cluster: informer caches plus change notifications.

Shared informers (the project's own, :mod:`tf_operator.k8s.informers`) mirror the jobs of each
kind the dashboard serves (TFJobs, PyTorchJobs, XGBoostJobs...: :func:`served_kinds`, the kinds whose CRD the
cluster has) and the pods labelled ``group-name=kubeflow.org``, indexed by the job they belong
to (each kind's job-name label); pages read from these caches, never from the API. Every change
is turned into a :class:`Change` naming the job's kind (by its plural), namespace and name, and
handed to each subscriber whose filter wants it. Subscribers are the web server's open event
streams: their ``deliver`` only schedules the notice on the server's loop
(``call_soon_threadsafe``), so a slow browser never blocks an informer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from tf_operator.k8s.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    ResourceEventHandlerFuncs,
)
from tf_operator.k8s.client import PODS, ApiError, KubeClient, is_forbidden, is_not_found
from tf_operator.k8s.informers import SharedInformerFactory
from tf_operator.sdk.client import replica_order
from tf_operator.sdk.kinds import KINDS, TFJOB, JobKindInfo

log = logging.getLogger(__name__)

JOB_INDEX = "job"
SYNC_TIMEOUT = 60.0


@dataclass(frozen=True)
class Change:
    source: str  # "job" or "pod"
    plural: str  # the job's kind, by its plural ("tfjobs", "pytorchjobs")
    namespace: str
    job: str  # the job's name (for a pod: its kind's job-name label)
    deleted: bool = False


def served_kinds(kube: KubeClient, namespace: str | None = None) -> list[JobKindInfo]:
    """The job kinds the cluster serves and lets us read, each known kind listed once: a
    kind whose CRD is missing (404) or that we may not list (403) is left out, with a line
    saying so, so that its informer does not hold up the others' sync."""
    served = []
    for kind in KINDS.values():
        try:
            kube.resource(kind.resource).list(namespace, limit=1)
        except ApiError as err:
            if is_not_found(err):
                log.info("no %s here: the %s CRD is not installed", kind.kind, kind.noun)
                continue
            if is_forbidden(err):
                log.warning("%s left out: we may not list %s (%s)", kind.kind, kind.plural, err)
                continue
            raise
        served.append(kind)
    return served


def _job_index(kinds: Sequence[JobKindInfo], pod: Any) -> list[str]:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    return [
        f"{kind.plural}/{meta.get('namespace')}/{labels[kind.job_name_label]}"
        for kind in kinds
        if labels.get(kind.job_name_label)
    ]


def _object(obj: Any) -> Any:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


Deliver = Callable[[Change], None]


class ClusterCache:
    """Jobs of ``kinds`` and their pods, cached by informers; ``subscribe`` for change
    notices."""

    def __init__(
        self,
        kube: KubeClient,
        namespace: str | None = None,
        kinds: Sequence[JobKindInfo] = (TFJOB,),
    ) -> None:
        self.kinds = {kind.plural: kind for kind in kinds}
        self._jobs_factory = SharedInformerFactory(kube, 0, namespace=namespace)
        self._pods_factory = SharedInformerFactory(
            kube, 0, namespace=namespace, label_selector="group-name=kubeflow.org"
        )
        self._jobs = {
            plural: self._jobs_factory.for_resource(kind.resource)
            for plural, kind in self.kinds.items()
        }
        self._pods = self._pods_factory.for_resource(PODS)
        self._pods.add_indexers({JOB_INDEX: partial(_job_index, list(self.kinds.values()))})
        self._subscribers: dict[int, tuple[Callable[[Change], bool], Deliver]] = {}
        self._next_token = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        for plural, informer in self._jobs.items():
            informer.add_event_handler(self._job_handlers(plural))
        self._pods.add_event_handler(
            ResourceEventHandlerFuncs(
                add=self._pod_changed,
                update=lambda _, o: self._pod_changed(o),
                delete=self._pod_changed,
            )
        )

    def _job_handlers(self, plural: str) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(
            add=lambda o: self._job_changed(plural, o),
            update=lambda _, o: self._job_changed(plural, o),
            delete=lambda o: self._job_changed(plural, o, deleted=True),
        )

    # ---- lifecycle --------------------------------------------------------------------------
    def start(self) -> bool:
        """Start the informers; True once every cache synced (within ``SYNC_TIMEOUT``)."""
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
    def jobs(self, namespace: str, plurals: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The namespace's jobs of every kind served (or of ``plurals``), newest first."""
        items = [
            job
            for plural, informer in self._jobs.items()
            if plurals is None or plural in plurals
            for job in informer.get_indexer().by_index(NAMESPACE_INDEX, namespace)
        ]
        return sorted(
            items,
            key=lambda j: (j["metadata"].get("creationTimestamp") or "", j["metadata"]["name"]),
            reverse=True,
        )

    def job(self, plural: str, namespace: str, name: str) -> dict[str, Any] | None:
        informer = self._jobs.get(plural)
        return (
            None if informer is None else informer.get_indexer().get_by_key(f"{namespace}/{name}")
        )

    def pods(self, plural: str, namespace: str, job: str) -> list[dict[str, Any]]:
        kind = self.kinds[plural]
        return sorted(
            self._pods.get_indexer().by_index(JOB_INDEX, f"{plural}/{namespace}/{job}"),
            key=lambda pod: replica_order(pod, kind),
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

    def _job_changed(self, plural: str, obj: Any, deleted: bool = False) -> None:
        meta = (_object(obj) or {}).get("metadata") or {}
        self._publish(
            Change("job", plural, meta.get("namespace", ""), meta.get("name", ""), deleted)
        )

    def _pod_changed(self, obj: Any) -> None:
        meta = (_object(obj) or {}).get("metadata") or {}
        labels = meta.get("labels") or {}
        for plural, kind in self.kinds.items():
            job = labels.get(kind.job_name_label)
            if job:
                self._publish(Change("pod", plural, meta.get("namespace", ""), job))
