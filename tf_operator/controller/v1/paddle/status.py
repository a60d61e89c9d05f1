"""What a PaddleJob's replica types say about the job (training-operator v1.9's
``UpdateJobStatus`` for PaddleJob).

The Master decides when the job has one: the job is Running while it runs and Succeeded once
it succeeded. Without a Master the workers decide: Succeeded once every worker succeeded, else
Running while any runs. Failures of any type fail the job, as any kind's do
(:mod:`tf_operator.common.jobcontroller.status`).
"""

from __future__ import annotations

from tf_operator.apis.common.v1.types import ReplicaStatus
from tf_operator.apis.paddle.v1.constants import REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER
from tf_operator.apis.paddle.v1.types import PaddleJob
from tf_operator.common.jobcontroller.kind import Progress


def paddle_progress(
    job: PaddleJob, rtype: str, replicas: int, counts: ReplicaStatus, index0_completed: bool
) -> Progress:
    """Running/Succeeded as decided by replica type ``rtype`` of ``job``."""
    expected = replicas - counts.succeeded
    if job.master_spec() is not None:
        if rtype == REPLICA_TYPE_MASTER:
            return Progress(running=counts.active > 0, succeeded=expected == 0)
        return Progress()
    if rtype == REPLICA_TYPE_WORKER:
        if expected == 0:
            return Progress(succeeded=True)
        return Progress(running=counts.active > 0)
    return Progress()


def is_master_role(job: PaddleJob, rtype: str, index: int) -> bool:
    """The Master's pods get the ``job-role: master`` label (v1.9's ``IsMasterRole``); a job
    without a Master has none."""
    return rtype == REPLICA_TYPE_MASTER
