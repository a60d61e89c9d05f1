"""scheduler-plugins' ``Coscheduling`` plugin: its extension points over the manager.

- QueueSort (``sort_key``): higher pod priority first, then the PodGroup's creation time (a pod
  without a group: the time it first entered the queue), then ``namespace/name``; the members
  of one group therefore come out of the queue one after another.
- PreFilter: the manager's checks; a refusal is final for this attempt (no node is tried).
- PostFilter: after a member found no node, the group gives up its waiting members unless
  enough are assigned already or the gap is at most 10% of ``minMember``; it may back off.
- Permit: ``SUCCESS`` lets every waiting member go with this one; ``WAIT`` holds the assumed
  pod up to the group's ``scheduleTimeoutSeconds`` (else the plugin's permit timeout); a pod
  whose PodGroup does not exist is refused. A wait that cannot last (a group's
  ``scheduleTimeoutSeconds`` of 0 or less) is a refusal with the timeout's message: the
  member's timer ends as it is set, and its siblings are not woken (waking them would only
  send them through the same refusal at once, ahead of every other gang in the queue); the
  refused member goes back to the queue and backs off like any unschedulable pod.
- Unreserve: a member that was assumed and then failed (timed out, rejected, bind failed)
  takes its waiting siblings down with it.

The scheduler provides ``WaitingPods``: the pods held at Permit and how to let them go.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

from localcluster.coscheduling.manager import PodGroupManager, Verdict
from localcluster.coscheduling.podgroup import Obj, group_key

NAME = "Coscheduling"
# PostFilter keeps the waiting members when the group lacks at most this share of minMember.
SMALL_GAP = 0.1


class WaitingPods(Protocol):
    def waiting_in_group(self, group: str) -> list[str]:
        """Keys of the pods of ``group`` held at Permit."""
        ...

    def allow(self, pod_key: str) -> None: ...

    def reject(self, pod_key: str, message: str) -> None: ...

    def activate_group(self, group: str, but: str) -> None:
        """Move the group's other pods (not ``but``) to the active queue now."""
        ...


@dataclass(frozen=True)
class CoschedulingArgs:
    """The plugin's arguments. Defaults are those of scheduler-plugins' chart (the install
    training-operator's CI uses): a 10 s permit timeout (the plugin's own default is 60 s)
    and no PodGroup back-off."""

    permit_waiting_time_seconds: int = 10
    pod_group_backoff_seconds: int = 0

    @classmethod
    def parse(cls, values: dict[str, object] | None) -> CoschedulingArgs:
        """``{"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 0}`` (either may be
        left out); raises ValueError on anything else."""
        values = dict(values or {})
        permit = values.pop("permitWaitingTimeSeconds", cls.permit_waiting_time_seconds)
        backoff = values.pop("podGroupBackoffSeconds", cls.pod_group_backoff_seconds)
        if values:
            raise ValueError(f"unknown Coscheduling arguments: {', '.join(sorted(values))}")
        parsed = []
        for name, value in (
            ("permitWaitingTimeSeconds", permit),
            ("podGroupBackoffSeconds", backoff),
        ):
            try:
                number = int(str(value))
            except ValueError:
                raise ValueError(f"{name}: {value!r} is not a number of seconds") from None
            if number < 0:
                raise ValueError(f"{name} cannot be negative")
            parsed.append(number)
        return cls(parsed[0], parsed[1])


class Code(enum.Enum):
    SUCCESS = "Success"
    WAIT = "Wait"
    UNSCHEDULABLE = "Unschedulable"


@dataclass(frozen=True)
class PermitResult:
    code: Code
    message: str = ""
    wait_seconds: float = 0.0


def go_duration(seconds: float) -> str:
    """A duration as Go prints it ("10s", "1m0s", "1.5s", "500ms", "0s", "-1s")."""
    if seconds == 0:
        return "0s"
    if seconds < 0:
        return "-" + go_duration(-seconds)
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    tail = f"{secs + (seconds - whole):g}s"
    if hours:
        return f"{hours}h{minutes}m{tail}"
    if minutes:
        return f"{minutes}m{tail}"
    return tail


def timeout_message(wait_seconds: float) -> str:
    """kube-scheduler's rejection of a pod whose wait at this plugin ended."""
    return f"rejected due to timeout after waiting {go_duration(wait_seconds)} at plugin {NAME}"


def pod_priority(pod: Obj) -> int:
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def namespaced_name(pod: Obj) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


class Coscheduling:
    name = NAME

    def __init__(
        self, manager: PodGroupManager, waiting: WaitingPods, args: CoschedulingArgs
    ) -> None:
        self._manager = manager
        self._waiting = waiting
        self._args = args

    def sort_key(self, pod: Obj, initial_attempt: float) -> tuple[int, float, str]:
        _, pg = self._manager.podgroup_of(pod)
        created = pg.created if pg is not None else initial_attempt
        return -pod_priority(pod), created, namespaced_name(pod)

    def pre_filter(self, pod: Obj) -> str | None:
        return self._manager.pre_filter(pod)

    def post_filter(self, pod: Obj) -> str:
        """The PostFilter message ("" when there is none) for a pod that found no node."""
        key, pg = self._manager.podgroup_of(pod)
        if pg is None:
            return "can not find pod group"
        assigned = self._manager.assigned_count(key)
        if assigned >= pg.min_member:
            return ""
        if (pg.min_member - assigned) / pg.min_member <= SMALL_GAP:
            return ""
        for waiting in self._waiting.waiting_in_group(key):
            self._waiting.reject(waiting, "optimistic rejection in PostFilter")
        backoff = self._args.pod_group_backoff_seconds
        if backoff and self._manager.member_count(key) >= pg.min_member:
            self._manager.backoff(key, backoff)
        self._manager.delete_permitted(key)
        name = (pod.get("metadata") or {}).get("name")
        return (
            f"PodGroup {key} gets rejected due to Pod {name} is unschedulable even after PostFilter"
        )

    def permit(self, pod: Obj, pod_key: str) -> PermitResult:
        verdict, activate = self._manager.permit(pod, pod_key)
        if verdict == Verdict.NOT_SPECIFIED:
            return PermitResult(Code.SUCCESS)
        if verdict == Verdict.NOT_FOUND:
            return PermitResult(Code.UNSCHEDULABLE, "PodGroup not found")
        key = group_key(pod)
        if verdict == Verdict.WAIT:
            _, pg = self._manager.podgroup_of(pod)
            wait = self._manager.wait_seconds(pg)
            if wait <= 0:
                return PermitResult(Code.UNSCHEDULABLE, timeout_message(wait))
            if activate:
                self._waiting.activate_group(key, but=pod_key)
            return PermitResult(Code.WAIT, wait_seconds=wait)
        for waiting in self._waiting.waiting_in_group(key):
            self._waiting.allow(waiting)
        return PermitResult(Code.SUCCESS)

    def unreserve(self, pod: Obj) -> None:
        key, pg = self._manager.podgroup_of(pod)
        if pg is None:
            return
        for waiting in self._waiting.waiting_in_group(key):
            self._waiting.reject(waiting, "rejection in Unreserve")
        self._manager.delete_permitted(key)
