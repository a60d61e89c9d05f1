"""Endpoints controller: one Endpoints object per Service with a selector.

Like kube-controller-manager's endpoints controller: pods matching the
service's selector in its namespace are listed under ``addresses`` when they
have an IP, are Ready and are not being deleted, and under
``notReadyAddresses`` when they have an IP but are not ready (or everything
under ``addresses`` with ``publishNotReadyAddresses``). Ports come from the
service, with named target ports resolved per pod. Endpoints of services
without a selector (and leader-election Endpoints) are never touched.
Informer handlers only enqueue service keys; one worker syncs them.

Every step is O(what changed), not O(objects in the namespace), so the controller keeps up
with tens of thousands of pods and services: a pod event finds its services through a
``SelectorIndex`` (each service filed under the rarest pair of its selector), and a service
sync finds its pods through a ``LabelIndex`` (each pod filed under every label pair; the
smallest bucket among the selector's pairs holds every candidate).
"""

from __future__ import annotations

import builtins
import logging
import threading
from typing import Any, cast

from localcluster.client.api import ClusterClient
from localcluster.client.informer import (
    ENDPOINTS,
    PODS,
    SERVICES,
    Informer,
    object_key,
)

logger = logging.getLogger(__name__)


def selector_matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def pod_ready(pod: dict[str, Any]) -> bool:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False


def _target_port(port: dict[str, Any], pod: dict[str, Any]) -> int | None:
    target = port.get("targetPort")
    if isinstance(target, str) and not target.isdigit():
        for container in (pod.get("spec") or {}).get("containers") or []:
            for cport in container.get("ports") or []:
                if cport.get("name") == target:
                    return cast(int | None, cport.get("containerPort"))
        return None
    return int(target) if target else port.get("port")


def _address(pod: dict[str, Any], service_name: str) -> dict[str, Any]:
    meta = pod["metadata"]
    spec = pod.get("spec") or {}
    address = {
        "ip": pod["status"]["podIP"],
        "targetRef": {
            "kind": "Pod",
            "namespace": meta.get("namespace"),
            "name": meta.get("name"),
            "uid": meta.get("uid"),
        },
    }
    if spec.get("nodeName"):
        address["nodeName"] = spec["nodeName"]
    if spec.get("hostname") and spec.get("subdomain") == service_name:
        address["hostname"] = spec["hostname"]
    return address


def build_subsets(service: dict[str, Any], pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Subsets grouped by identical port lists, addresses sorted by IP."""
    spec = service.get("spec") or {}
    publish_all = bool(spec.get("publishNotReadyAddresses"))
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        status = pod.get("status") or {}
        if not status.get("podIP") or pod["metadata"].get("deletionTimestamp"):
            continue
        if status.get("phase") in ("Succeeded", "Failed"):
            continue
        ports = []
        for port in spec.get("ports") or []:
            number = _target_port(port, pod)
            if number is None:
                continue
            entry = {"port": number, "protocol": port.get("protocol", "TCP")}
            if port.get("name"):
                entry["name"] = port["name"]
            ports.append(entry)
        key = tuple(sorted((p.get("name", ""), p["port"], p["protocol"]) for p in ports))
        group = groups.setdefault(key, {"ports": ports})
        field = "addresses" if publish_all or pod_ready(pod) else "notReadyAddresses"
        group.setdefault(field, []).append(_address(pod, service["metadata"]["name"]))
    subsets = []
    for _, group in sorted(groups.items()):
        for field in ("addresses", "notReadyAddresses"):
            if field in group:
                group[field].sort(key=lambda a: tuple(int(x) for x in a["ip"].split(".")))
        if not group["ports"]:
            del group["ports"]
        subsets.append(group)
    return subsets


Pair = tuple[str, str, str]  # (namespace, label, value)


def _pairs(namespace: str, labels: dict[str, Any]) -> list[Pair]:
    return [(namespace, label, str(value)) for label, value in labels.items()]


class LabelIndex:
    """Object keys filed under every (namespace, label, value) pair of their labels.

    An object matches a selector only if it carries every pair of it, so the smallest
    bucket among the selector's pairs holds all candidates: ``candidates`` costs
    O(selector pairs + that bucket), whatever else the namespace holds.
    """

    def __init__(self) -> None:
        self._by_pair: dict[Pair, set[str]] = {}
        self._pairs: dict[str, list[Pair]] = {}

    def set(self, key: str, namespace: str, labels: dict[str, Any]) -> None:
        self.remove(key)
        pairs = _pairs(namespace, labels)
        self._pairs[key] = pairs
        for pair in pairs:
            self._by_pair.setdefault(pair, set()).add(key)

    def remove(self, key: str) -> None:
        for pair in self._pairs.pop(key, ()):
            keys = self._by_pair[pair]
            keys.discard(key)
            if not keys:
                del self._by_pair[pair]

    def candidates(self, namespace: str, selector: dict[str, Any]) -> builtins.set[str]:
        """Keys that may match ``selector`` (a superset of the matches; empty selector: none)."""
        buckets = [self._by_pair.get(pair, set()) for pair in _pairs(namespace, selector)]
        if not buckets:
            return set()
        smallest = min(buckets, key=len)
        return set(smallest)


class SelectorIndex:
    """Services filed under one (namespace, label, value) pair of their selector.

    A service can only select a pod that carries every pair of its selector, so filing it
    under one pair is enough to find it from any pod it selects, in O(pod labels + the
    buckets of those labels). Each service goes under the pair whose bucket is smallest when
    it is filed, so a pair every service shares (``group-name=kubeflow.org``) stays nearly
    empty and a pod event never walks all services of the namespace.
    """

    def __init__(self) -> None:
        self._by_pair: dict[Pair, set[str]] = {}
        self._entries: dict[str, tuple[Pair, dict[str, Any]]] = {}

    def set(self, key: str, namespace: str, selector: dict[str, Any] | None) -> None:
        self.remove(key)
        if selector:
            pair = min(
                _pairs(namespace, selector), key=lambda p: (len(self._by_pair.get(p, ())), p)
            )
            self._entries[key] = (pair, selector)
            self._by_pair.setdefault(pair, set()).add(key)

    def remove(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            keys = self._by_pair.get(entry[0], set())
            keys.discard(key)
            if not keys:
                self._by_pair.pop(entry[0], None)

    def matching(self, namespace: str, labels: dict[str, Any]) -> builtins.set[str]:
        found = set()
        for pair in _pairs(namespace, labels):
            for key in self._by_pair.get(pair, ()):
                if selector_matches(self._entries[key][1], labels):
                    found.add(key)
        return found


class EndpointsController:
    """Keeps Endpoints in step with Services and their pods."""

    def __init__(self, client: ClusterClient) -> None:
        self._client = client
        self._cond = threading.Condition()
        self._queue: set[str] = set()
        self._managed: set[str] = set()
        self._index = SelectorIndex()  # endpoints keys created or updated for a selector service
        self._pod_labels = LabelIndex()  # pod keys by label pair, for service syncs
        self._services = Informer(client, SERVICES, self._on_service)
        self._pods = Informer(client, PODS, self._on_pod)
        self._endpoints = Informer(client, ENDPOINTS, self._on_endpoints)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = [
            self._services.start(stop_event),
            self._pods.start(stop_event),
            self._endpoints.start(stop_event),
        ]
        worker = threading.Thread(
            target=self._run, args=(stop_event,), name="endpoints", daemon=True
        )
        worker.start()
        return [*threads, worker]

    def _enqueue(self, key: str) -> None:
        with self._cond:
            self._queue.add(key)
            self._cond.notify()

    def _on_service(self, event: str, service: dict[str, Any], _old: dict[str, Any] | None) -> None:
        key = object_key(service)
        with self._cond:
            if event == "DELETED":
                self._index.remove(key)
            else:
                selector = (service.get("spec") or {}).get("selector")
                self._index.set(key, service["metadata"].get("namespace", ""), selector)
        self._enqueue(key)

    def _on_endpoints(
        self, event: str, endpoints: dict[str, Any], _old: dict[str, Any] | None
    ) -> None:
        # someone else changed or removed an Endpoints we own: resync its service
        if self._services.get(object_key(endpoints)) is not None:
            self._enqueue(object_key(endpoints))

    def _on_pod(self, event: str, pod: dict[str, Any], old: dict[str, Any] | None) -> None:
        namespace = pod["metadata"].get("namespace", "")
        with self._cond:
            if event == "DELETED":
                self._pod_labels.remove(object_key(pod))
            else:
                self._pod_labels.set(
                    object_key(pod), namespace, pod["metadata"].get("labels") or {}
                )
            keys = self._index.matching(namespace, pod["metadata"].get("labels") or {})
            if old is not None:
                keys |= self._index.matching(namespace, old["metadata"].get("labels") or {})
        for key in keys:
            self._enqueue(key)

    def _run(self, stop_event: threading.Event) -> None:
        self._services.wait_for_sync()
        self._pods.wait_for_sync()
        self._endpoints.wait_for_sync()
        while not stop_event.is_set():
            with self._cond:
                if not self._queue:
                    self._cond.wait(0.5)
                    continue
                key = self._queue.pop()
            try:
                self.sync(key)
            except Exception as err:  # noqa: BLE001 - retry shortly
                if getattr(err, "code", None) in (404, 409):
                    logger.debug("endpoints sync of %s raced: %s", key, err)
                else:
                    logger.exception("endpoints sync of %s failed", key)
                stop_event.wait(0.2)
                self._enqueue(key)

    def sync(self, key: str) -> None:
        namespace, name = key.split("/", 1)
        service = self._services.get(key)
        existing = self._endpoints.get(key)
        selector = (service.get("spec") or {}).get("selector") if service else None
        if not selector:
            if existing is not None and key in self._managed:
                self._managed.discard(key)
                self._client.delete(ENDPOINTS, namespace, name)
            return
        assert service is not None  # the selector is the service's
        self._managed.add(key)
        with self._cond:
            candidates = self._pod_labels.candidates(namespace, selector)
        pods = [
            p
            for p in map(self._pods.get, sorted(candidates))
            if p is not None and selector_matches(selector, p["metadata"].get("labels") or {})
        ]
        subsets = build_subsets(service, pods)
        labels = dict(service["metadata"].get("labels") or {})
        if existing is None:
            body = {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {"name": name, "namespace": namespace, "labels": labels},
                "subsets": subsets,
            }
            try:
                self._client.create(ENDPOINTS, namespace, body, shared=True)
                return
            except Exception as err:  # noqa: BLE001
                if getattr(err, "code", None) != 409:
                    raise
            existing = self._client.get(
                ENDPOINTS, namespace, name, shared=True
            )  # our informer lags
        if (existing.get("subsets") or []) == subsets and (
            existing["metadata"].get("labels") or {}
        ) == labels:
            return
        # the stored Endpoints is shared: a new body around it (the API server copies what it
        # stores); a stale resourceVersion (informer lag) gives 409: the worker retries shortly
        updated = {
            **existing,
            "metadata": {**existing["metadata"], "labels": labels},
            "subsets": subsets,
        }
        self._client.update(ENDPOINTS, namespace, name, updated, shared=True)
