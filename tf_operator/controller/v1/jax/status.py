"""What a JAXJob's workers say about the job (training-operator v1.9's ``UpdateJobStatus`` for
JAXJob): Succeeded once every worker succeeded, else Running while any runs. Failures fail the
job as any kind's do (:mod:`tf_operator.common.jobcontroller.status`)."""

from __future__ import annotations

from tf_operator.apis.common.v1.types import ReplicaStatus
from tf_operator.apis.jax.v1.constants import REPLICA_TYPE_WORKER
from tf_operator.apis.jax.v1.types import JAXJob
from tf_operator.common.jobcontroller.kind import Progress


def jax_progress(
    job: JAXJob, rtype: str, replicas: int, counts: ReplicaStatus, index0_completed: bool
) -> Progress:
    """Running/Succeeded as decided by replica type ``rtype`` of ``job``."""
    if rtype != REPLICA_TYPE_WORKER:
        return Progress()
    if replicas - counts.succeeded == 0:
        return Progress(succeeded=True)
    return Progress(running=counts.active > 0)


def is_master_role(job: JAXJob, rtype: str, index: int) -> bool:
    """Pod 0 (the coordinator) gets the ``job-role: master`` label (v1.9's ``IsMasterRole``:
    index 0 of any type)."""
    return index == 0
