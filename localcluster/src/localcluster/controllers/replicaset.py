"""The ReplicaSet controller: keeps ``spec.replicas`` pods of the template alive.

As kube-controller-manager's: pods matching the selector are claimed (``ownership``); when
fewer active pods (not terminating, not Succeeded/Failed) exist than wanted, new ones are
created from the template (``generateName: <rs>-``, a controller reference to the set), when
more exist the least valuable are deleted first (unscheduled before scheduled, pending before
running, not ready before ready, more restarts first, newest first); at most 500 per sync.
Status: ``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``, ``availableReplicas``
(ready for ``minReadySeconds``), ``observedGeneration`` and a ``ReplicaFailure`` condition
while pods cannot be created or deleted. Events: ``SuccessfulCreate``, ``SuccessfulDelete``,
``FailedCreate``, ``FailedDelete``.

The sync reads pods and sets straight from the API server, which is strongly consistent, so it
needs none of client-go's expectations: a pod it just created is in the next read.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from localcluster.apimachinery.objects import format_time, parse_time
from localcluster.client.api import ClusterClient
from localcluster.client.events import record_event
from localcluster.client.informer import PODS, Informer, object_key, start_informers
from localcluster.client.keyqueue import KeyQueue, run_worker
from localcluster.controllers import ownership

logger = logging.getLogger(__name__)

REPLICA_SETS = ("apps", "v1", "replicasets")
BURST = 500
COMPONENT = "replicaset-controller"


def is_active(pod: dict[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def ready_since(pod: dict[str, Any]) -> float | None:
    """When the pod last became Ready, or None while it is not."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            if condition.get("status") != "True":
                return None
            return parse_time(condition.get("lastTransitionTime") or "") or 0.0
    return None


def _deletion_rank(pod: dict[str, Any]) -> tuple[Any, ...]:
    status = pod.get("status") or {}
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(status.get("phase") or "", 0)
    restarts = sum(c.get("restartCount", 0) for c in status.get("containerStatuses") or [])
    created = parse_time(pod["metadata"].get("creationTimestamp") or "") or 0.0
    return (
        bool((pod.get("spec") or {}).get("nodeName")),
        phase_rank,
        ready_since(pod) is not None,
        -restarts,
        -created,
    )


class ReplicaSetController:
    def __init__(self, client: ClusterClient, clock: Callable[[], float] = time.time) -> None:
        self._client = client
        self._clock = clock
        self._queue = KeyQueue()
        self._sets = Informer(client, REPLICA_SETS, self._on_set)
        self._pods = Informer(client, PODS, self._on_pod)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = start_informers((self._sets, self._pods), stop_event)
        threads.append(run_worker(self._queue, self.sync, stop_event, COMPONENT))
        return threads

    # -- event handlers ---------------------------------------------------------------

    def _on_set(self, _event: str, rs: dict[str, Any], _old: dict[str, Any] | None) -> None:
        self._queue.add(object_key(rs))

    def _on_pod(self, event: str, pod: dict[str, Any], old: dict[str, Any] | None) -> None:
        keys = ownership.controller_keys("ReplicaSet", pod, old)
        if event != "DELETED" and ownership.controller_ref(pod) is None and is_active(pod):
            namespace = pod["metadata"].get("namespace", "")
            keys |= {
                object_key(rs)
                for rs in ownership.selecting(self._sets.in_namespace(namespace), pod)
            }
        for key in keys:
            self._queue.add(key)

    # -- sync -------------------------------------------------------------------------

    def sync(self, key: str) -> float | None:
        namespace, name = key.split("/", 1)
        try:
            rs = self._client.get(REPLICA_SETS, namespace, name)
        except Exception:  # noqa: BLE001 - gone: its pods are the garbage collector's
            return None
        spec = rs.get("spec") or {}
        pods = self._owned_pods(rs)
        error = None
        if not rs["metadata"].get("deletionTimestamp"):
            error = self._manage(rs, [p for p in pods if is_active(p)])
            pods = self._owned_pods(rs)
        return self._update_status(rs, spec, pods, error)

    def _owned_pods(self, rs: dict[str, Any]) -> list[dict[str, Any]]:
        namespace = rs["metadata"]["namespace"]
        candidates = self._client.list(PODS, namespace).items
        return ownership.claim(
            self._client, PODS, rs, (rs.get("spec") or {}).get("selector") or {}, candidates
        )

    def _manage(self, rs: dict[str, Any], active: list[dict[str, Any]]) -> tuple[str, str] | None:
        """Create or delete pods; returns (reason, message) of the first failure."""
        diff = len(active) - int((rs.get("spec") or {}).get("replicas", 1))
        if diff < 0:
            for _ in range(min(-diff, BURST)):
                failure = self._create_pod(rs)
                if failure:
                    return failure
        elif diff > 0:
            for pod in sorted(active, key=_deletion_rank)[: min(diff, BURST)]:
                failure = self._delete_pod(rs, pod)
                if failure:
                    return failure
        return None

    def _create_pod(self, rs: dict[str, Any]) -> tuple[str, str] | None:
        template = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
        meta = template.get("metadata") or {}
        meta.pop("name", None)
        meta.update(
            generateName=f"{rs['metadata']['name']}-",
            ownerReferences=[ownership.owner_reference(rs)],
        )
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": template.get("spec") or {},
        }
        try:
            created = self._client.create(PODS, rs["metadata"]["namespace"], pod)
        except Exception as err:  # noqa: BLE001 - reported as an event and a condition
            message = f"Error creating: {getattr(err, 'message', err)}"
            record_event(self._client, rs, "Warning", "FailedCreate", message, COMPONENT)
            return "FailedCreate", message
        message = f"Created pod: {created['metadata']['name']}"
        record_event(self._client, rs, "Normal", "SuccessfulCreate", message, COMPONENT)
        return None

    def _delete_pod(self, rs: dict[str, Any], pod: dict[str, Any]) -> tuple[str, str] | None:
        name = pod["metadata"]["name"]
        try:
            self._client.delete(
                PODS,
                pod["metadata"]["namespace"],
                name,
                preconditions={"uid": pod["metadata"]["uid"]},
            )
        except Exception as err:  # noqa: BLE001
            if getattr(err, "code", None) == 404:
                return None
            message = f"Error deleting: {getattr(err, 'message', err)}"
            record_event(self._client, rs, "Warning", "FailedDelete", message, COMPONENT)
            return "FailedDelete", message
        record_event(
            self._client, rs, "Normal", "SuccessfulDelete", f"Deleted pod: {name}", COMPONENT
        )
        return None

    def _update_status(
        self,
        rs: dict[str, Any],
        spec: dict[str, Any],
        pods: list[dict[str, Any]],
        error: tuple[str, str] | None,
    ) -> float | None:
        now = self._clock()
        min_ready = int(spec.get("minReadySeconds") or 0)
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        active = [p for p in pods if is_active(p)]
        ready = [t for t in (ready_since(p) for p in active) if t is not None]
        available = [t for t in ready if t + min_ready <= now]
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": sum(
                1
                for p in active
                if all(
                    (p["metadata"].get("labels") or {}).get(k) == v
                    for k, v in template_labels.items()
                )
            ),
            "readyReplicas": len(ready),
            "availableReplicas": len(available),
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        conditions = [
            c
            for c in (rs.get("status") or {}).get("conditions") or []
            if c.get("type") != "ReplicaFailure"
        ]
        if error is not None:
            previous = next(
                (
                    c
                    for c in (rs.get("status") or {}).get("conditions") or []
                    if c.get("type") == "ReplicaFailure"
                ),
                None,
            )
            conditions.append(
                {
                    "type": "ReplicaFailure",
                    "status": "True",
                    "lastTransitionTime": (previous or {}).get("lastTransitionTime")
                    or format_time(now),
                    "reason": error[0],
                    "message": error[1],
                }
            )
        if conditions:
            status["conditions"] = conditions
        status = {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")}
        if status != (rs.get("status") or {}):
            rs["status"] = status
            self._client.update(
                REPLICA_SETS,
                rs["metadata"]["namespace"],
                rs["metadata"]["name"],
                rs,
                subresource="status",
            )
        if error is not None:
            return 1.0
        waiting = [t + min_ready - now for t in ready if t + min_ready > now]
        return min(waiting) + 0.01 if waiting else None
