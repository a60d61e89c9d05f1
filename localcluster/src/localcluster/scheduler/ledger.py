"""The node ledger: what every node holds, shared by every scheduler of the local cluster.

One pod informer and one node informer feed a lock-protected map of ``NodeInfo`` (node,
summed requests of its active pods, the same as scoring counts them (non-zero), pod count,
the part being released). Every non-terminal pod with a ``nodeName`` counts, whoever bound
it, so the default scheduler and the batch schedulers never place two pods into the same free
room (upstream kube-batch only saw another scheduler's pods once they left Pending:
difference 9 in ``localcluster.batchscheduler``).

Schedulers add a pod to the ledger *before* they bind it ("assume") and ``forget`` it when the
bind fails; the informer replaces an assumed entry by the real one when the binding arrives.
``try_assume_all`` checks and records a whole gang atomically: either every member still fits
and all are recorded, or none is.

Listeners registered with ``add_pod_listener``/``add_node_listener`` are called after the
ledger has applied an event, outside its lock, from the informer's consume context (so never
concurrently with each other for one resource). ``sync()`` is the informers' barrier.

A pod whose requests cannot be parsed (``cpu: lots`` written past validation) counts as a pod
with no requests (not even non-zero ones): it occupies a pod slot, and the ledger carries on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from localcluster.client.api import ClusterClient
from localcluster.client.informer import NODES, PODS, Informer, object_key
from localcluster.scheduler.predicates import (
    NodeInfo,
    add_amounts,
    fit_reasons,
    is_active,
    nonzero_requests,
    pod_requests,
)

logger = logging.getLogger(__name__)

Listener = Callable[[str, dict[str, Any], dict[str, Any] | None], None]


@dataclass
class _Entry:
    """One pod counted on one node, with exactly the amounts added (so removal is exact)."""

    node: str
    requests: dict[str, Fraction]
    nonzero: dict[str, Fraction]
    releasing: bool
    assumed: bool


def amounts_or_empty(pod: dict[str, Any]) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """The pod's effective and non-zero requests, or none when they cannot be parsed (logged)."""
    try:
        return pod_requests(pod), nonzero_requests(pod)
    except (ValueError, TypeError, AttributeError) as err:
        logger.warning("pod %s has unparsable resources (%s); counting none", object_key(pod), err)
        return {}, {}


class NodeLedger:
    """Per-node accounting of every bound, active pod (see module docstring)."""

    def __init__(self, client: ClusterClient) -> None:
        self._lock = threading.RLock()
        self._nodes: dict[str, NodeInfo] = {}
        self._entries: dict[str, _Entry] = {}
        self._pod_listeners: list[Listener] = []
        self._node_listeners: list[Listener] = []
        self.pods = Informer(client, PODS, self._on_pod)
        self.nodes = Informer(client, NODES, self._on_node)
        self._threads: list[threading.Thread] = []

    # -- wiring -------------------------------------------------------------------------

    def add_pod_listener(self, listener: Listener) -> None:
        self._pod_listeners.append(listener)

    def add_node_listener(self, listener: Listener) -> None:
        self._node_listeners.append(listener)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        """Start both informers once; later calls return no new threads."""
        if self._threads:
            return []
        self._threads = [self.nodes.start(stop_event), self.pods.start(stop_event)]
        return list(self._threads)

    def join(self, timeout: float | None = None) -> None:
        for thread in self._threads:
            thread.join(timeout)

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self.nodes.wait_for_sync(timeout) and self.pods.wait_for_sync(timeout)

    def sync(self, timeout: float = 10.0) -> bool:
        """Apply every node and pod change committed before this call (informer barrier)."""
        return self.nodes.sync(timeout) and self.pods.sync(timeout)

    # -- reading ------------------------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[list[NodeInfo]]:
        """The live infos of existing nodes, with the ledger locked for the ``with`` block."""
        with self._lock:
            yield [info for info in self._nodes.values() if info.node]

    def snapshot(self) -> dict[str, NodeInfo]:
        """Independent copies of every existing node's info, by name."""
        with self._lock:
            return {
                name: NodeInfo(
                    node=info.node,
                    requested=dict(info.requested),
                    pod_count=info.pod_count,
                    releasing=dict(info.releasing),
                    nonzero=dict(info.nonzero),
                    parsed=info.parsed,
                )
                for name, info in self._nodes.items()
                if info.node
            }

    def node_of(self, key: str) -> str | None:
        with self._lock:
            entry = self._entries.get(key)
            return entry.node if entry else None

    def free_per_node(self, given_back: Iterable[str] = ()) -> list[dict[str, Fraction]]:
        """What each existing node has left: allocatable minus requests per resource, and
        free pod slots as ``pods``, counting the pods ``given_back`` (keys) as not there."""
        with self._lock:
            returned: dict[str, list[_Entry]] = {}
            for key in given_back:
                entry = self._entries.get(key)
                if entry is not None:
                    returned.setdefault(entry.node, []).append(entry)
            out = []
            for name, info in self._nodes.items():
                if not info.node:
                    continue
                allocatable = info.allocatable()
                free = {r: v - info.requested.get(r, Fraction(0)) for r, v in allocatable.items()}
                pods = info.pod_count
                for entry in returned.get(name, ()):
                    add_amounts(free, entry.requests)
                    pods -= 1
                free["pods"] = allocatable.get("pods", Fraction(0)) - pods
                out.append(free)
            return out

    # -- assuming -----------------------------------------------------------------------

    def assume(self, pod: dict[str, Any], node_name: str) -> None:
        """Count ``pod`` on ``node_name`` before its binding is written (lock may be held)."""
        with self._lock:
            self._record(object_key(pod), node_name, pod, assumed=True)

    def try_assume_all(self, placements: list[tuple[dict[str, Any], str]]) -> dict[str, list[str]]:
        """Assume every ``(pod, node)`` if each still fits, counting the earlier ones; else
        assume none and return the reasons of the pods that no longer fit, by pod key."""
        with self._lock:
            done: list[str] = []
            failures: dict[str, list[str]] = {}
            for pod, node_name in placements:
                info = self._nodes.get(node_name)
                reasons = ["node not found"] if info is None or not info.node else []
                if not reasons:
                    reasons = fit_reasons(pod, info)  # type: ignore[arg-type]
                if reasons:
                    failures[object_key(pod)] = reasons
                    continue
                self._record(object_key(pod), node_name, pod, assumed=True)
                done.append(object_key(pod))
            if failures:
                for key in done:
                    self._drop(key)
            return failures

    def forget(self, key: str) -> None:
        """Undo an ``assume`` whose binding failed (a confirmed binding is kept)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.assumed:
                self._drop(key)

    # -- informer handlers ----------------------------------------------------------------

    def _info(self, node_name: str) -> NodeInfo:
        info = self._nodes.get(node_name)
        if info is None:
            info = self._nodes[node_name] = NodeInfo(node={})
        return info

    def _record(self, key: str, node_name: str, pod: dict[str, Any], assumed: bool) -> None:
        self._drop(key)
        requests, nonzero = amounts_or_empty(pod)
        releasing = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
        info = self._info(node_name)
        info.add(requests, nonzero, 1)
        if releasing:
            add_amounts(info.releasing, requests)
        self._entries[key] = _Entry(node_name, requests, nonzero, releasing, assumed)

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        info = self._info(entry.node)
        info.add(entry.requests, entry.nonzero, -1)
        if entry.releasing:
            add_amounts(info.releasing, entry.requests, -1)

    def _on_node(self, event_type: str, node: dict[str, Any], old: dict[str, Any] | None) -> None:
        with self._lock:
            self._info(node["metadata"]["name"]).node = {} if event_type == "DELETED" else node
        for listener in self._node_listeners:
            listener(event_type, node, old)

    def _on_pod(self, event_type: str, pod: dict[str, Any], old: dict[str, Any] | None) -> None:
        key = object_key(pod)
        node_name = (pod.get("spec") or {}).get("nodeName")
        with self._lock:
            if event_type != "DELETED" and node_name and is_active(pod):
                self._record(key, node_name, pod, assumed=False)
            elif event_type == "DELETED" or not is_active(pod):
                self._drop(key)
            # else unbound: an assumed pod stays counted until its binding arrives
        for listener in self._pod_listeners:
            listener(event_type, pod, old)
