"""Per-reconcile context: the pass's clock reading and the side effects held until the end.

Job-level events (``TFJobSucceeded``, ``TFJobFailed``, ``TFJobRestarting``) and metric
increments are collected here and released only after the status write they describe has
succeeded; a pass that fails on a 409 and is retried therefore does not emit them twice
(spec §10 #29). Errors of independent steps are collected too, so one failed create does not
stop the other replica types from being reconciled or the status from being written (#28).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tf_operator.control.util import event_object


class ReconcileErrors(Exception):
    """Several steps of one reconcile failed; ``errors`` holds each one."""

    def __init__(self, errors: list[BaseException]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


@dataclass
class ReconcileContext:
    now: datetime
    # Each held effect may name the condition whose transition it announces; it is dropped at
    # flush time if the status we overwrote already had that condition True (the transition
    # was announced by an earlier pass that wrote before our cache caught up).
    events: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    metrics: list[tuple[Callable[[], None], str | None]] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def event(
        self, event_type: str, reason: str, message: str, condition: str | None = None
    ) -> None:
        self.events.append((event_type, reason, message, condition))

    def count(self, increment: Callable[[], None], condition: str | None = None) -> None:
        self.metrics.append((increment, condition))

    def flush(self, recorder: Any, job: Any, already_true: frozenset[str] = frozenset()) -> None:
        """Emit the held events and metrics (call after a successful status write)."""
        target = event_object(job)
        for event_type, reason, message, condition in self.events:
            if condition not in already_true:
                recorder.event(target, event_type, reason, message)
        for increment, condition in self.metrics:
            if condition not in already_true:
                increment()
        self.events.clear()
        self.metrics.clear()

    def raise_errors(self) -> None:
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise ReconcileErrors(list(self.errors))
