"""All-or-nothing for pods that name a PodGroup: the default scheduler's ``GangScheduling``.

A pod whose ``spec.schedulingGroup.podGroupName`` names a ``scheduling.k8s.io/v1beta1``
PodGroup with a ``gang`` policy is never placed alone. Like kube-scheduler v1.37 with the
``GenericWorkload`` gate on, the default scheduler:

- keeps the group's pods waiting, with no condition written, while the PodGroup does not exist
  or fewer than ``minCount`` of its pods are pending or already placed (kube-scheduler's
  PreEnqueue: "waiting for minCount pods from a gang to appear in scheduling queue");
- then runs one cycle for the whole group: its pending pods are tried in turn (oldest first) on
  a copy of the nodes that counts the ones placed before them; as soon as ``minCount`` can no
  longer be reached the cycle stops, nothing is assumed or bound, and the PodGroup gets
  ``PodGroupInitiallyScheduled=False`` with reason ``Unschedulable`` and kube-scheduler's
  message ("minCount (4) cannot be satisfied: 2 scheduled, 1 remaining, pod group preemption:
  No preemption victims found for incoming preemptor"); each pending pod gets
  ``PodScheduled=False/Unschedulable`` and a ``FailedScheduling`` event: a pod that fits no
  node with its own reason ("0/2 nodes are available: 2 Insufficient cpu."), the others with
  "pod group is unschedulable, " and the group's message;
- once ``minCount`` fit, every placement is assumed in the ledger at once (``try_assume_all``:
  no other scheduler takes the room between two bindings), the pods are bound, and the group
  gets ``PodGroupInitiallyScheduled=True`` (reason ``Scheduled``), which never goes back to
  False. Pods of the group beyond ``minCount`` that did not fit are unschedulable one by one.

A group with a ``basic`` policy is no gang: its pods are scheduled one by one. A change of a
PodGroup (created, minCount lowered) moves its waiting pods back to the queue.

Differences from kube-scheduler: no preemption on behalf of a group (its message says no victim
was found, as kube-scheduler's does when none is), no topology or resource claims (their gates are off, ``localcluster.features``); a group is evaluated when one of its
pods is popped rather than from a dedicated group queue.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from localcluster.client.api import ClusterClient
from localcluster.client.events import now_rfc3339
from localcluster.client.informer import Informer, object_key
from localcluster.scheduler.ledger import NodeLedger
from localcluster.scheduler.podconditions import ConditionReporter
from localcluster.scheduler.predicates import NodeInfo, is_active, select_node

logger = logging.getLogger(__name__)

PODGROUPS = ("scheduling.k8s.io", "v1beta1", "podgroups")
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULED = "Scheduled"
# kube-scheduler's texts: the rejection of a pod that fitted but whose group did not, and what
# its DefaultPreemption adds to a group's message when no victim is found (always, here)
GROUP_REJECTED = "pod group is unschedulable, "
NO_VICTIMS = ", pod group preemption: No preemption victims found for incoming preemptor"


def scheduling_group_of(pod: dict[str, Any]) -> str:
    """The PodGroup a pod names in ``spec.schedulingGroup`` ("" when none)."""
    group = (pod.get("spec") or {}).get("schedulingGroup")
    name = group.get("podGroupName") if isinstance(group, dict) else None
    return name if isinstance(name, str) else ""


def gang_min_count(group: dict[str, Any]) -> int | None:
    """A PodGroup's ``gang.minCount``; None for a basic (or malformed) policy."""
    policy = (group.get("spec") or {}).get("schedulingPolicy")
    gang = policy.get("gang") if isinstance(policy, dict) else None
    count = gang.get("minCount") if isinstance(gang, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def group_key(pod: dict[str, Any]) -> str:
    """``namespace/podGroupName`` of the group a pod names ("" when it names none)."""
    name = scheduling_group_of(pod)
    if not name:
        return ""
    return f"{(pod.get('metadata') or {}).get('namespace') or ''}/{name}"


def _created(pod: dict[str, Any]) -> tuple[str, str]:
    m = pod.get("metadata") or {}
    return (str(m.get("creationTimestamp") or ""), str(m.get("name") or ""))


@dataclass
class GangOutcome:
    """What one group cycle did: ``None`` from :meth:`GangScheduling.schedule` means "not a
    gang, schedule the pod alone"."""

    bound: list[str] = field(default_factory=list)  # pod keys bound by this cycle
    waiting: list[str] = field(default_factory=list)  # pod keys left pending


class GangScheduling:
    """The PodGroups and their pods, and one cycle per group (see the module docstring)."""

    def __init__(
        self,
        client: ClusterClient,
        ledger: NodeLedger,
        reporter: ConditionReporter,
        bind: Callable[[str, dict[str, Any], str], bool],
        wake: Callable[[], None],
    ) -> None:
        self._client = client
        self._ledger = ledger
        self._reporter = reporter
        self._bind = bind  # (pod key, pod, node) -> bound
        self._wake = wake  # moves the waiting pods back to the active queue
        self._lock = threading.Lock()
        self._members: dict[str, set[str]] = {}  # group key -> keys of its active pods
        self.groups = Informer(client, PODGROUPS, self._on_group)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        return [self.groups.start(stop_event)]

    # -- informers ------------------------------------------------------------------------

    def observe(self, event_type: str, pod: dict[str, Any]) -> None:
        """Track which active pods belong to which group (called for every pod event)."""
        gkey = group_key(pod)
        if not gkey:
            return
        key = object_key(pod)
        gone = event_type == "DELETED" or not is_active(pod)
        with self._lock:
            members = self._members.setdefault(gkey, set())
            if gone:
                members.discard(key)
                if not members:
                    del self._members[gkey]
            else:
                members.add(key)

    def _on_group(self, event_type: str, group: dict[str, Any], old: dict[str, Any] | None) -> None:
        if event_type == "ADDED" or (
            event_type == "MODIFIED" and (old or {}).get("spec") != group.get("spec")
        ):
            self._wake()

    # -- one group cycle ------------------------------------------------------------------

    def schedule(
        self, pod: dict[str, Any], pending: Callable[[str], list[dict[str, Any]]]
    ) -> GangOutcome | None:
        """Run the cycle of the group ``pod`` names; ``pending(group key)`` gives the group's
        pods waiting in the scheduler. None when the pod is no gang member."""
        gkey = group_key(pod)
        if not gkey:
            return None
        group = self.groups.get(gkey)
        if group is None:  # not created yet: wait for it, silently
            return GangOutcome(waiting=[object_key(pod)])
        min_count = gang_min_count(group)
        if min_count is None:
            return None  # a basic policy: no gang
        queued = [p for p in pending(gkey) if self._ledger.node_of(object_key(p)) is None]
        if object_key(pod) not in {object_key(p) for p in queued}:
            return GangOutcome()  # placed meanwhile
        with self._lock:
            members = set(self._members.get(gkey, ()))
        scheduled = sum(1 for key in members if self._ledger.node_of(key) is not None)
        queued.sort(key=_created)
        keys = [object_key(p) for p in queued]
        if len(queued) + scheduled < min_count:
            return GangOutcome(waiting=keys)  # PreEnqueue: the gang is not all there
        return self._cycle(group, min_count, scheduled, queued)

    def _cycle(
        self, group: dict[str, Any], min_count: int, scheduled: int, queued: list[dict[str, Any]]
    ) -> GangOutcome:
        placements: list[tuple[dict[str, Any], str]] = []
        misfits: dict[str, tuple[dict[str, Any], str]] = {}
        message = ""
        with self._ledger.locked():
            nodes = self._ledger.snapshot()
            infos: list[NodeInfo] = list(nodes.values())
            remaining = len(queued)
            for pod in queued:
                chosen, why = select_node(pod, infos)
                remaining -= 1
                if chosen is not None:
                    chosen.add_pod(pod)
                    placements.append((pod, chosen.name))
                    scheduled += 1
                else:
                    misfits[object_key(pod)] = (pod, why)
                if remaining + scheduled < min_count:
                    message = (
                        f"minCount ({min_count}) cannot be satisfied: "
                        f"{scheduled} scheduled, {remaining} remaining{NO_VICTIMS}"
                    )
                    break
            failures = {} if message else self._ledger.try_assume_all(placements)
        keys = [object_key(p) for p in queued]
        if message or failures:
            if failures:  # the ledger moved under the copy: try again
                return GangOutcome(waiting=keys)
            self._set_condition(group, "False", REASON_UNSCHEDULABLE, message)
            for pod in queued:  # a pod that fits nowhere says why; the others, the group's why
                misfit = misfits.get(object_key(pod))
                told = misfit[1] if misfit else f"{GROUP_REJECTED}{message}"
                self._reporter.report(pod, REASON_UNSCHEDULABLE, told, "FailedScheduling")
            return GangOutcome(waiting=keys)
        outcome = GangOutcome()
        for pod, node in placements:
            key = object_key(pod)
            if self._bind(key, pod, node):
                outcome.bound.append(key)
            else:
                outcome.waiting.append(key)
        for key, (pod, why) in misfits.items():
            self._reporter.report(pod, REASON_UNSCHEDULABLE, why, "FailedScheduling")
            outcome.waiting.append(key)
        self._set_condition(group, "True", REASON_SCHEDULED, "")
        logger.debug("scheduled pod group %s: %d pods", object_key(group), len(outcome.bound))
        return outcome

    def _set_condition(self, group: dict[str, Any], status: str, reason: str, message: str) -> None:
        """Set ``PodGroupInitiallyScheduled`` as kube-scheduler does: never back from True."""
        current = self.groups.get(object_key(group)) or group
        meta = current.get("metadata") or {}
        conditions = [
            c
            for c in ((current.get("status") or {}).get("conditions") or [])
            if isinstance(c, dict)
        ]
        existing = next((c for c in conditions if c.get("type") == INITIALLY_SCHEDULED), None)
        if existing is not None:
            if existing.get("status") == "True" and status != "True":
                return
            if (existing.get("status"), existing.get("reason"), existing.get("message")) == (
                status,
                reason,
                message,
            ):
                return
        changed = existing is None or existing.get("status") != status
        condition = {
            "type": INITIALLY_SCHEDULED,
            "status": status,
            "reason": reason,
            "message": message,
            "observedGeneration": meta.get("generation") or 1,
            "lastTransitionTime": (
                now_rfc3339() if changed else (existing or {}).get("lastTransitionTime")
            ),
        }
        others = [c for c in conditions if c.get("type") != INITIALLY_SCHEDULED]
        try:
            self._client.patch(
                PODGROUPS,
                meta.get("namespace"),
                str(meta.get("name")),
                {"status": {"conditions": [*others, condition]}},
                "merge",
                subresource="status",
            )
        except Exception as err:  # noqa: BLE001 - a deleted group: its pods go with it
            logger.info("could not set %s on %s: %s", INITIALLY_SCHEDULED, object_key(group), err)
