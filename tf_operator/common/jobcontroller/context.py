"""The per-sync context: one pass over one job, and the side effects held until its end.

A :class:`SyncContext` carries the job, the pass's clock reading, its claimed pods and services
and the status as read, so no reconciler keeps per-job state on ``self``. Job-level events and
metric increments wait here for the status write they describe (D28); errors of independent
steps are collected so the pass goes on (D27); failed pods to recreate wait until their failure
is written (D11). A pass creates at most ``MAX_CREATIONS_PER_SYNC`` objects, queued in
``creates`` and handed at the end of the pass to the create helpers, which run them in
slow-start batches that end at the first failure (D46), so a large or failing job takes its
turn in the queue like any other (D38). ``D<n>``: docs/divergences.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, ParamSpec, TypeVar

from tf_operator.common.jobcontroller.kind import J, PodEnv
from tf_operator.control.object_control import EventRecorder
from tf_operator.control.util import event_object
from tf_operator.k8s.controller.expectations import ExpectedCreate
from tf_operator.k8s.objects import Obj

P = ParamSpec("P")
T = TypeVar("T")
Logger = logging.Logger | logging.LoggerAdapter[logging.Logger]

# Pods and services one pass may create. The rest wait for the next pass, which runs once the
# informer has seen these (D1), after the keys queued meanwhile. Kubernetes' job controller
# caps a sync at 500 pod creations; ours is lower to keep a pass short.
MAX_CREATIONS_PER_SYNC = 100


class ReconcileErrors(Exception):
    """Several steps of one reconcile failed; ``errors`` holds each one."""

    def __init__(self, errors: list[BaseException]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


@dataclass(frozen=True)
class SpecRecord:
    """What a job's status keeps of the spec a pass runs on (D39, D153): its digest, and the
    spec itself as compact JSON only while the job runs on it because an invalid edit of its
    spec is ignored (so that another process goes on from it)."""

    digest: str
    copy: str | None = None


@dataclass
class SyncContext(Generic[J]):
    """One reconcile pass of one job of the kind's own class ``J`` (see the module docstring)."""

    key: str
    job: J
    now: datetime
    logger: logging.LoggerAdapter[logging.Logger]
    old_status: Obj = field(default_factory=dict)
    # What the status records of the spec this pass runs on (D39, D153); None: nothing.
    spec_record: SpecRecord | None = None
    pods: list[Obj] = field(default_factory=list)
    services: list[Obj] = field(default_factory=list)
    restarts: list[Obj] = field(default_factory=list)
    # Creates by kind ("pods", "services"), run in slow-start batches, a lane per kind, once
    # the walk is over; each one's expectation is raised when it is queued.
    creates: dict[str, list[ExpectedCreate]] = field(default_factory=dict)
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (type, reason, message)
    metrics: list[Callable[[], None]] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    # Why a pod or service of the job can never be created (its name is held by another
    # controller's object): the pass fails the job (D152).
    conflicts: list[str] = field(default_factory=list)
    raw: Obj = field(default_factory=dict)  # the cached object the job was decoded from
    creations_left: int = MAX_CREATIONS_PER_SYNC
    # The job's cluster environment for the pods this pass creates (made on the first one).
    pod_env: PodEnv | None = None
    # Why a gang scheduler holds the job's pods back, when it does (told by the start-up
    # policy, D104).
    gang_wait: str | None = None
    gang_unschedulable: str | None = None
    # (event reason, message): why the job cannot start whatever any scheduler does (a gang
    # policy nothing can satisfy, a create the API server refuses); told on every job, with
    # or without a start-up policy (D156, D157)
    blocked: tuple[str, str] | None = None
    # while blocked by what no event of the job's own announces the end of (a queue or a
    # priority class created), the pass is run again after this many seconds
    recheck_after: float | None = None

    def take_creation(self) -> bool:
        """Spend one creation of this pass's budget; False once it is used up."""
        if self.creations_left <= 0:
            return False
        self.creations_left -= 1
        return True

    def event(self, event_type: str, reason: str, message: str) -> None:
        self.events.append((event_type, reason, message))

    def count(self, increment: Callable[[], None]) -> None:
        self.metrics.append(increment)

    def collect(self, step: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | None:
        """Run one step; a failure is kept for the end of the pass and the pass goes on."""
        try:
            return step(*args, **kwargs)
        except Exception as err:
            self.errors.append(err)
            return None

    def flush(self, recorder: EventRecorder) -> None:
        """Emit the held events and metrics (call after a successful status write)."""
        target = event_object(self.job)
        for event_type, reason, message in self.events:
            recorder.event(target, event_type, reason, message)
        for increment in self.metrics:
            increment()
        self.events.clear()
        self.metrics.clear()

    def raise_errors(self) -> None:
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise ReconcileErrors(list(self.errors))
