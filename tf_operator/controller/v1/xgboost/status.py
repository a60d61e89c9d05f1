"""What an XGBoostJob's replica types say about the job (training-operator v1.9's
``UpdateJobStatus`` for XGBoostJob): the Master decides. The job is Running while the Master
runs and Succeeded once it succeeded; the workers' states say nothing but their failures, which
fail the job as any kind's do (:mod:`tf_operator.common.jobcontroller.status`)."""

from __future__ import annotations

from tf_operator.apis.common.v1.types import ReplicaStatus
from tf_operator.apis.xgboost.v1.constants import REPLICA_TYPE_MASTER
from tf_operator.apis.xgboost.v1.types import XGBoostJob
from tf_operator.common.jobcontroller.kind import Progress


def xgboost_progress(
    job: XGBoostJob, rtype: str, replicas: int, counts: ReplicaStatus, index0_completed: bool
) -> Progress:
    """Running/Succeeded as decided by replica type ``rtype`` of ``job``."""
    if rtype != REPLICA_TYPE_MASTER:
        return Progress()
    return Progress(running=counts.active > 0, succeeded=replicas - counts.succeeded == 0)


def is_master_role(job: XGBoostJob, rtype: str, index: int) -> bool:
    """The Master's pod gets the ``job-role: master`` label (v1.9's ``IsMasterRole``)."""
    return rtype == REPLICA_TYPE_MASTER
