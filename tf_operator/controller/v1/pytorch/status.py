"""What a PyTorchJob's replica types say about the job (training-operator v1.9's
``UpdateJobStatus`` for PyTorchJob).

The Master decides when the job has one: the job is Running while it runs and Succeeded once
it succeeded. Without a Master the workers decide: Succeeded once every worker succeeded, or,
with an elastic policy, once any did (torchrun's elastic agents end together); else Running
while any runs. Failures of any type fail the job; that rule, the condition algebra and the
status write are shared by every kind (:mod:`tf_operator.common.jobcontroller.status`).
"""

from __future__ import annotations

from tf_operator.apis.common.v1.types import ReplicaStatus
from tf_operator.apis.pytorch.v1.constants import REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER
from tf_operator.apis.pytorch.v1.types import PyTorchJob
from tf_operator.common.jobcontroller.kind import Progress


def pytorch_progress(
    job: PyTorchJob, rtype: str, replicas: int, counts: ReplicaStatus, index0_completed: bool
) -> Progress:
    """Running/Succeeded as decided by replica type ``rtype`` of ``job``."""
    expected = replicas - counts.succeeded
    if job.has_master():
        if rtype == REPLICA_TYPE_MASTER:
            return Progress(running=counts.active > 0, succeeded=expected == 0)
        return Progress()
    if rtype == REPLICA_TYPE_WORKER:
        elastic = job.spec.elastic_policy is not None
        if expected == 0 or (elastic and counts.succeeded > 0):
            return Progress(succeeded=True)
        return Progress(running=counts.active > 0)
    return Progress()


def is_master_role(job: PyTorchJob, rtype: str, index: int) -> bool:
    """The Master's pod, else worker 0's, gets the ``job-role: master`` label (v1.9's
    ``IsMasterRole``)."""
    if job.has_master():
        return rtype == REPLICA_TYPE_MASTER
    return rtype == REPLICA_TYPE_WORKER and index == 0
