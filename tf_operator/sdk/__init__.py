"""Python SDK for TFJobs, PyTorchJobs, XGBoostJobs, JAXJobs and PaddleJobs: ``TFJobClient``,
``PyTorchJobClient``, ``XGBoostJobClient``, ``JAXJobClient``, ``PaddleJobClient`` (one ``JobClient``
class), the ``tfjob(...)`` builder and typed errors.

>>> from tf_operator.sdk import TFJobClient, tfjob
>>> client = TFJobClient()                      # kubeconfig or in-cluster config
>>> client.create(tfjob("mnist", image="kubeflow/tf-dist-mnist-test:1.0", workers=2))
>>> client.wait_for_job("mnist", timeout=600)   # driven by a watch
>>> for pod, line in client.get_logs("mnist", replica_type="worker", follow=True): ...
>>> client.suspend("mnist"); client.resume("mnist")  # runPolicy.suspend: pods go, then return
"""

from tf_operator.sdk.builder import tfjob
from tf_operator.sdk.client import (
    JAXJOBS,
    PADDLEJOBS,
    PYTORCHJOBS,
    TFJOBS,
    XGBOOSTJOBS,
    JAXJobClient,
    JobClient,
    PaddleJobClient,
    PyTorchJobClient,
    TFJobClient,
    XGBoostJobClient,
    load_job,
    pod_selector,
)
from tf_operator.sdk.conditions import (
    get_conditions,
    has_condition,
    is_failed,
    is_finished,
    is_restarting,
    is_running,
    is_succeeded,
    job_state,
    replica_statuses,
)
from tf_operator.sdk.config import connect
from tf_operator.sdk.errors import (
    AlreadyExists,
    ApiError,
    Conflict,
    FieldCause,
    Invalid,
    NotFound,
    WaitTimeout,
)
from tf_operator.sdk.kinds import JAXJOB, PADDLEJOB, PYTORCHJOB, TFJOB, XGBOOSTJOB, JobKindInfo
from tf_operator.sdk.logs import LogLine, LogStream
from tf_operator.sdk.replicas import ReplicaInfo, replica_info
from tf_operator.sdk.runpolicy import (
    is_managed_elsewhere,
    is_suspended,
    managed_by,
    queue_name,
    suspend_requested,
)

__all__ = [
    "JAXJOB",
    "JAXJOBS",
    "PADDLEJOB",
    "PADDLEJOBS",
    "PYTORCHJOB",
    "PYTORCHJOBS",
    "TFJOB",
    "TFJOBS",
    "XGBOOSTJOB",
    "XGBOOSTJOBS",
    "JAXJobClient",
    "JobClient",
    "JobKindInfo",
    "PaddleJobClient",
    "PyTorchJobClient",
    "XGBoostJobClient",
    "AlreadyExists",
    "ApiError",
    "Conflict",
    "FieldCause",
    "Invalid",
    "LogLine",
    "LogStream",
    "NotFound",
    "ReplicaInfo",
    "TFJobClient",
    "WaitTimeout",
    "connect",
    "get_conditions",
    "has_condition",
    "is_failed",
    "is_finished",
    "is_managed_elsewhere",
    "is_restarting",
    "is_running",
    "is_succeeded",
    "is_suspended",
    "job_state",
    "load_job",
    "managed_by",
    "pod_selector",
    "queue_name",
    "replica_info",
    "replica_statuses",
    "suspend_requested",
    "tfjob",
]
