"""The PodGroup manager of scheduler-plugins' coscheduling (``pkg/coscheduling/core``).

It answers the plugin's questions about a pod's group, from what the scheduler sees
(``GroupView``): PreFilter (is the group backed off? does it have ``minMember`` pods? can the
cluster's free room hold its ``minResources``, ``minMember`` pod slots included?) and Permit
(with this pod, are ``minMember`` of the group assigned: bound, or assumed and waiting?).

Two short-lived sets, as upstream's caches: *permitted* groups passed the minResources check
and skip it while the permit timeout lasts (so the members of one group do not each count the
room their siblings already took); *backed-off* groups are refused at PreFilter for the
plugin's ``podGroupBackoffSeconds`` after PostFilter gave up on them.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Protocol

from localcluster.coscheduling.podgroup import Obj, PodGroupSpec, group_key

Amounts = dict[str, Fraction]
# A group's wait when neither it nor the plugin's arguments name one (util.DefaultWaitTime).
DEFAULT_WAIT_SECONDS = 60.0


class GroupView(Protocol):
    """What the manager reads of the cluster (the scheduler provides it)."""

    def podgroup(self, key: str) -> PodGroupSpec | None: ...

    def member_count(self, key: str) -> int:
        """Pods of the namespace labelled with the group, whatever their state."""
        ...

    def assigned_count(self, key: str, excluding: str = "") -> int:
        """Pods of the group holding a node (bound and active, or assumed), but ``excluding``."""
        ...

    def free_per_node(self, group: str) -> list[Amounts]:
        """Each node's allocatable minus its pods' requests (``pods``: free slots), the
        group's own pods given back."""
        ...


class Verdict(enum.Enum):
    NOT_SPECIFIED = "PodGroup not specified"
    NOT_FOUND = "PodGroup not found"
    SUCCESS = "Success"
    WAIT = "Wait"


class ExpiringSet:
    """Keys that expire ``ttl`` seconds after they were (last) added."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._until: dict[str, float] = {}

    def add(self, key: str, ttl: float) -> None:
        with self._lock:
            self._until[key] = self._clock() + ttl

    def __contains__(self, key: object) -> bool:
        with self._lock:
            until = self._until.get(str(key))
            if until is None:
                return False
            if until <= self._clock():
                del self._until[str(key)]
                return False
            return True

    def discard(self, key: str) -> None:
        with self._lock:
            self._until.pop(key, None)


def format_amount(name: str, value: Fraction) -> str:
    """A quantity as Kubernetes would print it: whole numbers as they are, binary suffixes
    for whole multiples of Ki of memory and storage, milli-units otherwise."""
    if value.denominator == 1:
        number = value.numerator
        if name in ("memory", "ephemeral-storage") and number and number % 1024 == 0:
            for suffix, size in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30)):
                if number % size == 0:
                    return f"{number // size}{suffix}"
            for suffix, size in (("Mi", 2**20), ("Ki", 2**10)):
                if number % size == 0:
                    return f"{number // size}{suffix}"
        return str(number)
    milli = value * 1000
    return f"{-(-milli.numerator // milli.denominator)}m"


def check_cluster_resource(free_per_node: Iterable[Amounts], request: Amounts) -> Amounts:
    """What of ``request`` the nodes' free room cannot cover together; empty when it fits.

    Node by node, each resource still wanted is lowered by what the node has free (as
    upstream's ``CheckClusterResource``: the room may be spread over nodes)."""
    wanted = {name: value for name, value in request.items() if value > 0}
    for free in free_per_node:
        for name in list(wanted):
            left = wanted[name] - free.get(name, Fraction(0))
            if left <= 0:
                del wanted[name]
            else:
                wanted[name] = left
        if not wanted:
            break
    return wanted


def resource_gap_message(gap: Amounts) -> str:
    parts = " ".join(f"{name}:{format_amount(name, gap[name])}" for name in sorted(gap))
    return f"resource gap: map[{parts}]"


class PodGroupManager:
    def __init__(
        self,
        view: GroupView,
        schedule_timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._view = view
        self._schedule_timeout = schedule_timeout
        self.permitted = ExpiringSet(clock)
        self.backed_off = ExpiringSet(clock)

    def podgroup_of(self, pod: Obj) -> tuple[str, PodGroupSpec | None]:
        """The pod's group key ("" when it has no label) and its PodGroup, if it exists."""
        key = group_key(pod)
        return key, (self._view.podgroup(key) if key else None)

    def pre_filter(self, pod: Obj) -> str | None:
        """None when the pod may go on, else why its group cannot be scheduled now."""
        key, pg = self.podgroup_of(pod)
        if pg is None:
            return None
        if key in self.backed_off:
            return f"podGroup {key} failed recently"
        count = self._view.member_count(key)
        if count < pg.min_member:
            name = (pod.get("metadata") or {}).get("name")
            return (
                f"pre-filter pod {name} cannot find enough sibling pods, "
                f"current pods number: {count}, minMember of group: {pg.min_member}"
            )
        if pg.min_resources is None or key in self.permitted:
            return None
        request = dict(pg.min_resources)
        request["pods"] = Fraction(pg.min_member)
        gap = check_cluster_resource(self._view.free_per_node(key), request)
        if gap:
            return resource_gap_message(gap)
        self.permitted.add(key, self._schedule_timeout)
        return None

    def permit(self, pod: Obj, pod_key: str) -> tuple[Verdict, bool]:
        """The verdict for an assumed pod, and whether its siblings should be activated (the
        first of its group to wait wakes the others up)."""
        key, pg = self.podgroup_of(pod)
        if not key:
            return Verdict.NOT_SPECIFIED, False
        if pg is None:
            return Verdict.NOT_FOUND, False
        assigned = self._view.assigned_count(key, excluding=pod_key)
        if assigned + 1 >= pg.min_member:
            return Verdict.SUCCESS, False
        return Verdict.WAIT, assigned == 0

    def assigned_count(self, key: str) -> int:
        return self._view.assigned_count(key)

    def member_count(self, key: str) -> int:
        return self._view.member_count(key)

    def backoff(self, key: str, seconds: float) -> None:
        if seconds > 0:
            self.backed_off.add(key, seconds)

    def delete_permitted(self, key: str) -> None:
        self.permitted.discard(key)

    def wait_seconds(self, pg: PodGroupSpec | None) -> float:
        """The group's ``scheduleTimeoutSeconds``, else the plugin's permit timeout (if set),
        else upstream's default of 60 s."""
        if pg is not None and pg.schedule_timeout_seconds is not None:
            return float(pg.schedule_timeout_seconds)
        return self._schedule_timeout or DEFAULT_WAIT_SECONDS
