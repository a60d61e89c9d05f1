"""Start-up that cannot hang (``lifecyclePolicy.startup``, divergence D104).

For a job with a start-up policy, every pass finds the first replica that does not start, in
the kind's replica order then by index: a pod still ``Pending`` whose container waits for a
reason other than being created (``ErrImagePull``, ``ImagePullBackOff``,
``CreateContainerConfigError``...), or that the scheduler could not place (``PodScheduled=False``
with its message), or the job's pods held back by a gang scheduler that has not admitted its
PodGroup. Its reason is written into the message of the job's ``Created`` condition after the
text it always had ("TFJob x is created. Blocked: ..."), updated as it changes and removed once
nothing blocks, with one Warning ``ReplicaBlocked`` event per new reason; so ``kubectl
describe`` and the SDK show why a job says Created and nothing more. What blocks a job whatever
any scheduler does (its gang policy asks what nothing can satisfy, the API server refuses its
creates: ``SyncContext.blocked``, D156, D157) comes first, and is told so on every job, with or
without a start-up policy, under its own event reason (``CreateRefused`` for a refused create,
a ResourceQuota's ``exceeded quota: ...`` among them).

With ``deadlineSeconds``, a pod still ``Pending`` that long after its creation (or, while the
gang holds every pod back, that long after the job was created; or, while the API server refuses
the creates for a ResourceQuota, that long after the first refusal: D111) fails the job with reason
``StartupDeadlineExceeded`` and the blocking reason, or with ``action: RestartJob`` recreates
every replica, counted once against ``backoffLimit`` as a failure rule's RestartJob is (D103).
The pass re-queues the job for the earliest deadline still ahead. ``D<n>``:
docs/divergences.md.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic

from tf_operator.apis.common.v1.lifecycle import (
    ACTION_RESTART_JOB,
    BLOCKED_PREFIX,
    StartupPolicy,
)
from tf_operator.apis.common.v1.types import JOB_CREATED, parse_time
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.failure_policy import (
    STARTUP_DEADLINE_EXCEEDED,
    restart_whole_job,
)
from tf_operator.common.jobcontroller.kind import J, Job
from tf_operator.control.util import EVENT_TYPE_WARNING
from tf_operator.k8s.client import ApiError, is_forbidden
from tf_operator.k8s.objects import Obj, labels_of, meta

REPLICA_BLOCKED_REASON = "ReplicaBlocked"
CAUSE_STARTUP_DEADLINE = "StartupDeadline"
# Container waiting reasons that are a normal part of starting, not a block.
STARTING_REASONS = frozenset({"ContainerCreating", "PodInitializing", ""})


# What kube-apiserver's ResourceQuota admission says when it refuses a create (its 403's
# message): the quota exceeded, its status not yet computed, a request it needs missing.
QUOTA_REFUSALS = (
    "exceeded quota:",
    "status unknown for quota:",
    "failed quota:",
    "insufficient quota",
)


def quota_refusal(err: BaseException) -> str | None:
    """The API server's message when ``err`` is a create refused for a ResourceQuota."""
    if not is_forbidden(err) or not isinstance(err, ApiError):
        return None
    message = err.message or str(err)
    return message if any(text in message for text in QUOTA_REFUSALS) else None


@dataclass
class CreateRefusal:
    """Since when one job's creates are refused for a quota: the start-up deadline's clock for
    a replica that has no pod (the refusal itself is told as every refused create is, D157)."""

    uid: str
    since: datetime | None = None  # the first pass that saw it


def startup_policy(job: Job) -> StartupPolicy | None:
    policy = job.run_policy.lifecycle
    return None if policy is None else policy.startup


# With an ordered start, these replica types run before the others' pods are created.
FIRST_TYPES = ("PS", "Chief", "Master")


def holds_back(ctx: SyncContext[J], rtype: str, replica_type_label: str) -> bool:
    """Whether an ordered start keeps the pods of ``rtype`` from being created in this pass:
    the job asks for one, ``rtype`` is not a PS or Chief (Master), and not every pod of those
    types runs yet (D105)."""
    policy = startup_policy(ctx.job)
    if policy is None or not policy.ordered or rtype in FIRST_TYPES:
        return False
    specs = ctx.job.replica_specs()
    for first in (t for t in FIRST_TYPES if t in specs):
        running = sum(
            1
            for p in ctx.pods
            if labels_of(p).get(replica_type_label) == first.lower()
            and (p.get("status") or {}).get("phase") == "Running"
            and not meta(p).get("deletionTimestamp")
        )
        if running < (specs[first].replicas or 0):
            return True
    return False


def publishes_not_ready_addresses(job: Job) -> bool:
    """Whether the job's services publish their pods' addresses before they are ready
    (D105)."""
    policy = startup_policy(job)
    return policy is not None and bool(policy.publish_not_ready_addresses)


def pod_blocking_reason(pod: Obj) -> str | None:
    """Why a pending pod does not start, if it says (pure)."""
    status = pod.get("status") or {}
    if status.get("phase") != "Pending" or meta(pod).get("deletionTimestamp"):
        return None
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(key) or ():
            waiting = (cs.get("state") or {}).get("waiting") or {}
            reason = str(waiting.get("reason") or "")
            if reason not in STARTING_REASONS:
                message = waiting.get("message")
                return f"{reason}: {message}" if message else reason
    for condition in status.get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return f"Unschedulable: {condition.get('message') or 'no node fits'}"
    return None


class StartupWatch(Generic[J]):
    """Tells why a job's replicas do not start, and enforces the start-up deadline."""

    def __init__(
        self,
        replica_type_label: str,
        fail: Callable[[SyncContext[J], str, str], None],  # the status reconciler's fail
        requeue_after: Callable[[str, float], None],  # the work queue's add_after
    ) -> None:
        self._label = replica_type_label
        self._fail = fail
        self._requeue_after = requeue_after
        # job key -> its creates' last quota refusal; written by the create helpers' threads
        self._refusals: dict[str, CreateRefusal] = {}
        self._lock = threading.Lock()

    def note_creates(self, key: str, uid: str, errors: Iterable[BaseException]) -> None:
        """What a batch of the job's creates met: a quota refusal starts the clock (the first
        since the creates were last refused keeps its time), a batch without one stops it."""
        refused = any(quota_refusal(err) is not None for err in errors)
        with self._lock:
            before = self._refusals.get(key)
            if not refused:
                self._refusals.pop(key, None)
            elif before is None or before.uid != uid:
                self._refusals[key] = CreateRefusal(uid)

    def suspended(self, ctx: SyncContext[J]) -> None:
        """A suspended job waits for nothing: its reason goes, and what its creates met is
        forgotten (a resumed job starts afresh)."""
        self._tell(ctx, None)
        self.forget(ctx.key)

    def forget(self, key: str) -> None:
        """The job left the cache."""
        with self._lock:
            self._refusals.pop(key, None)

    def _refusal(self, ctx: SyncContext[J]) -> CreateRefusal | None:
        """The quota refusal's clock of the job's creates, while the pass has creates to
        retry."""
        if not any(ctx.creates.values()):
            return None
        with self._lock:
            refusal = self._refusals.get(ctx.key)
            if refusal is None or refusal.uid != ctx.job.uid:
                return None
            if refusal.since is None:
                refusal.since = ctx.now
            return CreateRefusal(refusal.uid, refusal.since)

    def check(self, ctx: SyncContext[J], admitted: bool, gang_message: str | None) -> None:
        """One pass's look at the job's start. What blocks the job whatever any scheduler does
        (``ctx.blocked``: a gang policy nothing satisfies, a refused create) is told on every
        job (D156, D157); the rest only on a job with a start-up policy."""
        policy = startup_policy(ctx.job)
        if policy is None:
            reason, text = ctx.blocked or (REPLICA_BLOCKED_REASON, None)
            self._tell(ctx, text, reason)
            return
        refusal = self._refusal(ctx)
        blocked = self._first_blocked(ctx, admitted, gang_message)
        if ctx.blocked is not None:  # it comes first, and names the deadline's failure too
            reason, text = ctx.blocked
            blocked = (None if blocked is None else blocked[0], text)
            self._tell(ctx, text, reason)
        else:
            self._tell(ctx, None if blocked is None else blocked[1])
        if policy.deadline_seconds is not None:
            self._enforce(ctx, policy, admitted, blocked, refusal)

    def _pending(self, ctx: SyncContext[J]) -> list[Obj]:
        order = {rt.lower(): i for i, rt in enumerate(ctx.job.replica_specs())}

        def position(pod: Obj) -> tuple[int, str]:
            rt = labels_of(pod).get(self._label, "")
            return order.get(rt, len(order)), str(meta(pod).get("name", ""))

        pending = [
            p
            for p in ctx.pods
            if (p.get("status") or {}).get("phase", "Pending") == "Pending"
            and not meta(p).get("deletionTimestamp")
        ]
        return sorted(pending, key=position)

    def _first_blocked(
        self, ctx: SyncContext[J], admitted: bool, gang_message: str | None
    ) -> tuple[Obj | None, str] | None:
        if not admitted:
            return None, gang_message or "the gang scheduler has not admitted the job's PodGroup"
        for pod in self._pending(ctx):
            reason = pod_blocking_reason(pod)
            if reason is not None:
                return pod, f"pod {meta(pod).get('name')}: {reason}"
        return None

    def _tell(
        self, ctx: SyncContext[J], text: str | None, reason: str = REPLICA_BLOCKED_REASON
    ) -> None:
        """The reason (or none) into the Created condition's message, and a Warning event
        (``reason``) when it is new: the condition is the memory, so a reason is told once
        however many passes see it, and again only after it changed or ended."""
        for condition in ctx.job.status.conditions or []:
            if condition.type != JOB_CREATED:
                continue
            base = condition.message.split(BLOCKED_PREFIX, 1)[0]
            told = condition.message[len(base) + len(BLOCKED_PREFIX) :] or None
            if told == text:
                return
            condition.message = base if text is None else base + BLOCKED_PREFIX + text
            condition.last_update_time = ctx.now
            if text is not None:
                ctx.logger.warning("%s is blocked: %s", ctx.job.name, text)
                ctx.event(EVENT_TYPE_WARNING, reason, text)
            return

    def _enforce(
        self,
        ctx: SyncContext[J],
        policy: StartupPolicy,
        admitted: bool,
        blocked: tuple[Obj | None, str] | None,
        refusal: CreateRefusal | None,
    ) -> None:
        deadline = policy.deadline_seconds or 0
        waiting: list[tuple[float, Obj | None]] = []
        if refusal is not None and refusal.since is not None:
            # a replica with no pod: its clock runs from the first refusal told (D111)
            waiting.append((_left(deadline, refusal.since, ctx.now), None))
        if not admitted:
            since = _created_at(ctx.job)
            if since is not None:
                waiting.append((_left(deadline, since, ctx.now), None))
        else:
            for pending in self._pending(ctx):
                created = parse_time(meta(pending).get("creationTimestamp"), "creationTimestamp")
                if created is not None:
                    waiting.append((_left(deadline, created, ctx.now), pending))
        if not waiting:
            return
        left, pod = min(waiting, key=lambda w: w[0])
        if left > 0:
            self._requeue_after(ctx.key, left)
            return
        if pod is not None:
            name = f"pod {meta(pod).get('name')}"
        else:
            name = "the job's PodGroup" if not admitted else "a replica's create"
        why = blocked[1] if blocked is not None else f"{name}: still Pending"
        message = f"{type(ctx.job).__name__} {ctx.job.name} did not start within {deadline}s: {why}"
        if policy.action == ACTION_RESTART_JOB and pod is not None:
            ctx.logger.warning("%s; restarting every replica", message)
            restart_whole_job(ctx, cause=CAUSE_STARTUP_DEADLINE)
            ctx.event(EVENT_TYPE_WARNING, STARTUP_DEADLINE_EXCEEDED, message)
            return
        self._fail(ctx, message, STARTUP_DEADLINE_EXCEEDED)


def _created_at(job: Job) -> datetime | None:
    for condition in job.status.conditions or []:
        if condition.type == JOB_CREATED:
            return condition.last_transition_time
    return None


def _left(deadline: int, since: datetime, now: datetime) -> float:
    return deadline - (now - since).total_seconds()
