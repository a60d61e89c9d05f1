"""Identity of the XGBoostJob API and the defaults training-operator v1.9 applies to it."""

from tf_operator.apis.common.v1.types import RESTART_POLICY_NEVER

GROUP_NAME = "kubeflow.org"
GROUP_VERSION = "v1"
API_VERSION = f"{GROUP_NAME}/{GROUP_VERSION}"
KIND = "XGBoostJob"
LIST_KIND = "XGBoostJobList"
PLURAL = "xgboostjobs"
SINGULAR = "xgboostjob"
CRD_NAME = f"{PLURAL}.{GROUP_NAME}"
# The framework label of v1.9's job counters (training_operator_jobs_*_total).
FRAMEWORK_NAME = "xgboost"

DEFAULT_PORT_NAME = "xgboostjob-port"
DEFAULT_CONTAINER_NAME = "xgboost"
DEFAULT_PORT = 9999
DEFAULT_RESTART_POLICY = RESTART_POLICY_NEVER

# Replica types (keys of spec.xgbReplicaSpecs), in the order the controller walks them.
REPLICA_TYPE_MASTER = "Master"
REPLICA_TYPE_WORKER = "Worker"
REPLICA_TYPE_ORDER = (REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER)
SPECS_FIELD = "xgbReplicaSpecs"
