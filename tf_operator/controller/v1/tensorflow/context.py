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
    events: list[tuple[str, str, str]] = field(default_factory=list)
    metrics: list[Callable[[], None]] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def event(self, event_type: str, reason: str, message: str) -> None:
        self.events.append((event_type, reason, message))

    def count(self, increment: Callable[[], None]) -> None:
        self.metrics.append(increment)

    def flush(self, recorder: Any, job: Any) -> None:
        """Emit the held events and metrics (call after a successful status write)."""
        target = event_object(job)
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
