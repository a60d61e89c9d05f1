"""The PodGroup protection controller: a PodGroup goes only once no active pod names it.

As kube-apiserver's ``PodGroupProtection`` admission and kube-controller-manager's
podgroup-protection controller (Kubernetes 1.37, ``GenericWorkload``): every PodGroup is created
with the finalizer ``scheduling.k8s.io/podgroup-protection`` (the emulator's admission adds it,
``controlplane.emulated.admission.podgroups``); when a PodGroup is being deleted, this
controller removes the finalizer once no pod that is not Succeeded or Failed names the group in
``spec.schedulingGroup.podGroupName`` (a pod being deleted still counts until it is gone).
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from localcluster.client.api import ClusterClient
from localcluster.client.informer import PODS, Informer, start_informers
from localcluster.client.keyqueue import KeyQueue, run_worker

PODGROUPS = ("scheduling.k8s.io", "v1beta1", "podgroups")
FINALIZER = "scheduling.k8s.io/podgroup-protection"


def _group_of(pod: dict[str, Any]) -> str:
    group = (pod.get("spec") or {}).get("schedulingGroup")
    name = group.get("podGroupName") if isinstance(group, dict) else None
    if not isinstance(name, str) or not name:
        return ""
    return f"{(pod.get('metadata') or {}).get('namespace') or ''}/{name}"


def _active(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


class PodGroupProtection:
    def __init__(self, client: ClusterClient) -> None:
        self._client = client
        self._queue = KeyQueue()
        self._groups = Informer(client, PODGROUPS, self._on_group)
        self._pods = Informer(client, PODS, self._on_pod)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = start_informers((self._groups, self._pods), stop_event)
        threads.append(run_worker(self._queue, self.sync, stop_event, "podgroup-protection"))
        return threads

    def _on_group(self, _event: str, group: dict[str, Any], _old: dict[str, Any] | None) -> None:
        meta = group.get("metadata") or {}
        if meta.get("deletionTimestamp") and FINALIZER in (meta.get("finalizers") or []):
            self._queue.add(f"{meta.get('namespace')}/{meta.get('name')}")

    def _on_pod(self, event: str, pod: dict[str, Any], _old: dict[str, Any] | None) -> None:
        key = _group_of(pod)
        if key and (event == "DELETED" or not _active(pod)):
            self._queue.add(key)

    def sync(self, key: str) -> None:
        group = self._groups.get(key)
        meta = (group or {}).get("metadata") or {}
        if not meta.get("deletionTimestamp") or FINALIZER not in (meta.get("finalizers") or []):
            return
        namespace, _, name = key.partition("/")
        if any(_group_of(p) == key and _active(p) for p in self._pods.in_namespace(namespace)):
            return  # still in use: a pod's end or deletion brings the group back here
        current = self._client.get(PODGROUPS, namespace, name)
        updated = copy.deepcopy(current)
        updated["metadata"]["finalizers"] = [
            f for f in updated["metadata"].get("finalizers") or [] if f != FINALIZER
        ]
        self._client.update(PODGROUPS, namespace, name, updated)
