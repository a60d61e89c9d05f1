"""What a TFJob's replica types say about the job (the TFJob half of v0.5.3 ``status.go``).

A Chief (or Master) decides when the job has one: the job is Running while it runs and
Succeeded once it succeeded. Without one, the workers decide: Succeeded when all of them
succeeded or worker 0 completed (with training-operator v1.9's ``successPolicy: AllWorkers``
only when all of them succeeded), else Running while any runs. PS and Evaluator never decide.
Failures of any type fail the job, but a worker's with v1.9's ``enableDynamicWorker``; that
rule, the condition algebra and the status write are shared by every kind
(:mod:`tf_operator.common.jobcontroller.status`).
"""

from __future__ import annotations

from tf_operator.apis.common.v1.types import ReplicaStatus
from tf_operator.apis.tensorflow.v1.constants import SUCCESS_POLICY_ALL_WORKERS
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
    dynamic = bool(job.spec.enable_dynamic_worker) and is_worker(rtype)
    if contains_chief_or_master_spec(job):
        if is_chief_or_master(rtype):
            return Progress(running=counts.active > 0, succeeded=expected == 0)
        return Progress(failures_tolerated=dynamic)
    if is_worker(rtype):
        all_workers = job.spec.success_policy == SUCCESS_POLICY_ALL_WORKERS
        if expected == 0 or (index0_completed and not all_workers):
            return Progress(succeeded=True, failures_tolerated=dynamic)
        return Progress(running=counts.active > 0, failures_tolerated=dynamic)
    return Progress()
