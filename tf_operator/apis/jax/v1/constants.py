"""Identity of the JAXJob API and the defaults training-operator v1.9 applies to it."""

from tf_operator.apis.common.v1.types import RESTART_POLICY_NEVER

GROUP_NAME = "kubeflow.org"
GROUP_VERSION = "v1"
API_VERSION = f"{GROUP_NAME}/{GROUP_VERSION}"
KIND = "JAXJob"
LIST_KIND = "JAXJobList"
PLURAL = "jaxjobs"
SINGULAR = "jaxjob"
CRD_NAME = f"{PLURAL}.{GROUP_NAME}"
# The framework label of v1.9's job counters (training_operator_jobs_*_total).
FRAMEWORK_NAME = "jax"

DEFAULT_PORT_NAME = "jaxjob-port"
DEFAULT_CONTAINER_NAME = "jax"
DEFAULT_PORT = 6666
DEFAULT_RESTART_POLICY = RESTART_POLICY_NEVER

# The one replica type (key of spec.jaxReplicaSpecs): worker 0 is the coordinator.
REPLICA_TYPE_WORKER = "Worker"
REPLICA_TYPE_ORDER = (REPLICA_TYPE_WORKER,)
SPECS_FIELD = "jaxReplicaSpecs"
