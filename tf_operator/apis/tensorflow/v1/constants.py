"""Identity of the TFJob API and the defaults v0.5.3 applies to it."""

from tf_operator.apis.common.v1.types import RESTART_POLICY_NEVER

GROUP_NAME = "kubeflow.org"
GROUP_VERSION = "v1"
API_VERSION = f"{GROUP_NAME}/{GROUP_VERSION}"
KIND = "TFJob"
LIST_KIND = "TFJobList"
PLURAL = "tfjobs"
SINGULAR = "tfjob"
CRD_NAME = f"{PLURAL}.{GROUP_NAME}"
# The framework label of training-operator v1.9's job counters (training_operator_jobs_*_total).
FRAMEWORK_NAME = "tensorflow"
# The versions the CRD serves (v0.5.3's CRD served both; v1beta2's types are v1's). The
# operator watches v1, the storage version: a job created as v1beta2 is the same object.
GROUP_VERSION_V1BETA2 = "v1beta2"
SERVED_VERSIONS = (GROUP_VERSION, GROUP_VERSION_V1BETA2)

ENV_KUBEFLOW_NAMESPACE = "KUBEFLOW_NAMESPACE"
DEFAULT_PORT_NAME = "tfjob-port"
DEFAULT_CONTAINER_NAME = "tensorflow"
DEFAULT_PORT = 2222
DEFAULT_RESTART_POLICY = RESTART_POLICY_NEVER

# Replica types (keys of spec.tfReplicaSpecs after defaulting).
REPLICA_TYPE_PS = "PS"
REPLICA_TYPE_WORKER = "Worker"
REPLICA_TYPE_CHIEF = "Chief"
REPLICA_TYPE_MASTER = "Master"
REPLICA_TYPE_EVAL = "Evaluator"

# The fixed order in which the port walks replica types. v0.5.3 iterated a Go map, whose order
# is random (divergence D20); any type outside this list sorts after it, alphabetically.
REPLICA_TYPE_ORDER = (
    REPLICA_TYPE_PS,
    REPLICA_TYPE_WORKER,
    REPLICA_TYPE_CHIEF,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_EVAL,
)

# spec.successPolicy (training-operator v1.9): "" keeps the default rule (a Chief/Master
# decides, else worker 0 or all workers); AllWorkers waits for every worker.
SUCCESS_POLICY_DEFAULT = ""
SUCCESS_POLICY_ALL_WORKERS = "AllWorkers"
SUCCESS_POLICIES = (SUCCESS_POLICY_DEFAULT, SUCCESS_POLICY_ALL_WORKERS)
