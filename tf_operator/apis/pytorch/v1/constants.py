"""Identity of the PyTorchJob API and the defaults training-operator v1.9 applies to it."""

from tf_operator.apis.common.v1.types import RESTART_POLICY_ON_FAILURE

GROUP_NAME = "kubeflow.org"
GROUP_VERSION = "v1"
API_VERSION = f"{GROUP_NAME}/{GROUP_VERSION}"
KIND = "PyTorchJob"
LIST_KIND = "PyTorchJobList"
PLURAL = "pytorchjobs"
SINGULAR = "pytorchjob"
CRD_NAME = f"{PLURAL}.{GROUP_NAME}"
# The framework label of v1.9's job counters (training_operator_jobs_*_total).
FRAMEWORK_NAME = "pytorch"

DEFAULT_PORT_NAME = "pytorchjob-port"
DEFAULT_CONTAINER_NAME = "pytorch"
DEFAULT_PORT = 23456
DEFAULT_RESTART_POLICY = RESTART_POLICY_ON_FAILURE
# spec.nprocPerNode when neither it nor elasticPolicy.nProcPerNode is given.
DEFAULT_NPROC_PER_NODE = "auto"

# Replica types (keys of spec.pytorchReplicaSpecs), in the order the controller walks them.
REPLICA_TYPE_MASTER = "Master"
REPLICA_TYPE_WORKER = "Worker"
REPLICA_TYPE_ORDER = (REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER)

# elasticPolicy.rdzvBackend values; c10d when none is given.
RDZV_BACKEND_C10D = "c10d"
RDZV_BACKEND_ETCD = "etcd"
RDZV_BACKEND_ETCD_V2 = "etcd-v2"
RDZV_BACKENDS = (RDZV_BACKEND_C10D, RDZV_BACKEND_ETCD, RDZV_BACKEND_ETCD_V2)
