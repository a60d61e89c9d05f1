"""Actions run in the configured order inside a session: enqueue, allocate, backfill, reclaim,
preempt. Each is a function ``execute(ssn)``; ``ACTIONS`` maps upstream's names to them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from localcluster.batchscheduler.actions import allocate, backfill, enqueue, preempt, reclaim

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

ACTIONS: dict[str, Callable[[Session], None]] = {
    "enqueue": enqueue.execute,
    "allocate": allocate.execute,
    "backfill": backfill.execute,
    "reclaim": reclaim.execute,
    "preempt": preempt.execute,
}
