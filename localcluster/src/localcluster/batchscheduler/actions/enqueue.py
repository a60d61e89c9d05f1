"""enqueue (Volcano): admit Pending PodGroups to ``Inqueue`` so allocate considers them.

A PodGroup without ``spec.minResources`` (the operator never sets it) is always admitted,
even before its pods exist, as upstream. [O] overcommit-based rejection is not built.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from localcluster.batchscheduler.session import Session

logger = logging.getLogger(__name__)


def execute(ssn: Session) -> None:
    for job in sorted(ssn.jobs.values(), key=ssn.job_key):
        if job.is_pending_phase():
            job.phase = "Inqueue"
            logger.debug("%s: job %s enqueued", ssn.flavour.name, job.uid)
