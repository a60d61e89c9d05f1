"""scheduler-plugins' PodGroup controller: every PodGroup's phase and pod counts.

Each PodGroup is synced when it or one of its pods (label ``scheduling.x-k8s.io/pod-group``)
changes, as upstream's ``PodGroupReconciler`` does:

- ``Finished`` and ``Failed`` are final: never synced again.
- A group still ``Pending`` or ``Scheduling`` with nothing running whose
  ``scheduleStartTime`` is more than 48 hours after its creation gets a Warning ``Timeout``
  event instead (upstream writes no ``scheduleStartTime`` itself; a user may).
- no phase yet -> ``Pending``; ``Pending`` -> ``Scheduling`` once ``minMember`` pods exist
  (``occupiedBy`` then names the first pod's owners, ``<namespace>/<owner>``, sorted);
- any later phase: ``running``/``succeeded``/``failed`` are counted; fewer pods than
  ``minMember`` -> ``Pending``; running + succeeded below ``minMember`` -> ``Scheduling``, at
  least ``minMember`` -> ``Running``; some failed and failed + running + succeeded at least
  ``minMember`` -> ``Failed``; succeeded at least ``minMember`` -> ``Finished``.

The status is merge-patched through ``/status`` only when it changed. Pods are those of the
group's namespace (upstream listed the label across all namespaces).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from localcluster.apimachinery.objects import parse_time
from localcluster.client.events import record_event
from localcluster.client.informer import PODS, Informer, object_key
from localcluster.client.keyqueue import KeyQueue, run_worker
from localcluster.coscheduling.podgroup import (
    FAILED,
    FINISHED,
    PENDING,
    POD_GROUP_LABEL,
    PODGROUPS,
    RUNNING,
    SCHEDULING,
    Obj,
    group_key,
)

if TYPE_CHECKING:
    from localcluster.client.api import ClusterClient

logger = logging.getLogger(__name__)

COMPONENT = "PodGroupController"
GIVE_UP_SECONDS = 48 * 3600


def pod_counts(pods: list[Obj]) -> tuple[int, int, int]:
    """Running, succeeded and failed pods."""
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    return phases.count("Running"), phases.count("Succeeded"), phases.count("Failed")


def occupied_by(pod: Obj) -> str | None:
    meta = pod.get("metadata") or {}
    refs = sorted(
        f"{meta.get('namespace') or ''}/{ref.get('name')}"
        for ref in meta.get("ownerReferences") or []
        if isinstance(ref, dict)
    )
    return ",".join(refs) if refs else None


def next_status(podgroup: Obj, pods: list[Obj]) -> dict[str, Any]:
    """The status the controller writes for ``podgroup`` whose pods are ``pods``."""
    spec = podgroup.get("spec") or {}
    status = dict(podgroup.get("status") or {})
    value = spec.get("minMember")
    min_member = value if isinstance(value, int) else 0
    phase = status.get("phase") or ""
    if phase == "":
        status["phase"] = PENDING
    elif phase == PENDING:
        if len(pods) >= min_member:
            status["phase"] = SCHEDULING
            owners = occupied_by(pods[0]) if pods else None
            if owners:
                status["occupiedBy"] = owners
    else:
        running, succeeded, failed = pod_counts(pods)
        for name, count in (("running", running), ("succeeded", succeeded), ("failed", failed)):
            if count:
                status[name] = count
            else:
                status.pop(name, None)
        if len(pods) < min_member:
            status["phase"] = PENDING
        else:
            if succeeded + running < min_member:
                status["phase"] = SCHEDULING
            if succeeded + running >= min_member:
                status["phase"] = RUNNING
            if failed and failed + running + succeeded >= min_member:
                status["phase"] = FAILED
            if succeeded >= min_member:
                status["phase"] = FINISHED
    return status


def gave_up(podgroup: Obj) -> bool:
    """Pending or Scheduling, nothing running, and scheduling started over 48 h after
    creation: upstream stops reconciling such a group."""
    status = podgroup.get("status") or {}
    if status.get("phase") not in (PENDING, SCHEDULING) or status.get("running"):
        return False
    started = parse_time(str(status.get("scheduleStartTime") or ""))
    created = parse_time(str((podgroup.get("metadata") or {}).get("creationTimestamp") or ""))
    return started is not None and created is not None and started - created > GIVE_UP_SECONDS


class PodGroupController:
    def __init__(self, client: ClusterClient) -> None:
        self._client = client
        self._queue = KeyQueue()
        self._lock = threading.Lock()
        self._members: dict[str, set[str]] = {}  # group key -> pod keys
        self._group_of: dict[str, str] = {}
        self._timeouts_told: set[str] = set()
        self.podgroups = Informer(client, PODGROUPS, self._on_podgroup)
        self.pods = Informer(client, PODS, self._on_pod, label_selector=POD_GROUP_LABEL)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = [self.pods.start(stop_event), self.podgroups.start(stop_event)]
        threads.append(run_worker(self._queue, self.sync, stop_event, "podgroup-controller"))
        return threads

    def _on_podgroup(self, event_type: str, podgroup: Obj, _old: Obj | None) -> None:
        if event_type != "DELETED":
            self._queue.add(object_key(podgroup))

    def _on_pod(self, event_type: str, pod: Obj, _old: Obj | None) -> None:
        key = object_key(pod)
        group = "" if event_type == "DELETED" else group_key(pod)
        with self._lock:
            previous = self._group_of.pop(key, "")
            if previous:
                self._members.get(previous, set()).discard(key)
            if group:
                self._members.setdefault(group, set()).add(key)
                self._group_of[key] = group
        for changed in {previous, group} - {""}:
            self._queue.add(changed)

    def pods_of(self, key: str) -> list[Obj]:
        with self._lock:
            keys = sorted(self._members.get(key, ()))
        return [pod for pod in map(self.pods.get, keys) if pod is not None]

    def sync(self, key: str) -> float | None:
        podgroup = self.podgroups.get(key)
        if podgroup is None:
            return None
        phase = (podgroup.get("status") or {}).get("phase")
        if phase in (FINISHED, FAILED):
            return None
        if gave_up(podgroup):
            if key not in self._timeouts_told:
                self._timeouts_told.add(key)
                record_event(
                    self._client,
                    podgroup,
                    "Warning",
                    "Timeout",
                    "schedule time longer than 48 hours",
                    COMPONENT,
                )
            return None
        current = podgroup.get("status") or {}
        status = next_status(podgroup, self.pods_of(key))
        if status == current:
            return None
        # a count that went to zero is removed (null), as upstream's omitempty field is
        body: dict[str, Any] = {**{name: None for name in current}, **status}
        meta = podgroup["metadata"]
        self._client.patch(
            PODGROUPS,
            meta["namespace"],
            meta["name"],
            {"status": body},
            "merge",
            subresource="status",
        )
        logger.debug("podgroup %s: phase %s", key, status.get("phase"))
        return None
