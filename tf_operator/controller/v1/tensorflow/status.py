"""What a TFJob's replica types say about the job (the TFJob half of v0.5.3 ``status.go``).

A Chief (or Master) decides when the job has one: the job is Running while it runs and
Succeeded once it succeeded. Without one, the workers decide: Succeeded when all of them
succeeded or worker 0 completed, else Running while any runs. PS and Evaluator never decide.
Failures of any type fail the job; that rule, the condition algebra and the status write are
shared by every kind (:mod:`tf_operator.common.jobcontroller.status`).
"""

from __future__ import annotations

from tf_operator.apis.common.v1.types import ReplicaStatus
from tf_operator.apis.tensorflow.v1.types import (
    TFJob,
    contains_chief_or_master_spec,
    is_chief_or_master,
    is_worker,
)
from tf_operator.common.jobcontroller.kind import Progress


def tf_progress(
    job: TFJob, rtype: str, replicas: int, counts: ReplicaStatus, index0_completed: bool
) -> Progress:
    """Running/Succeeded as decided by replica type ``rtype`` of ``job``."""
    expected = replicas - counts.succeeded
    if contains_chief_or_master_spec(job):
        if is_chief_or_master(rtype):
            return Progress(running=counts.active > 0, succeeded=expected == 0)
        return Progress()
    if is_worker(rtype):
        if expected == 0 or index0_completed:
            return Progress(succeeded=True)
        return Progress(running=counts.active > 0)
    return Progress()
