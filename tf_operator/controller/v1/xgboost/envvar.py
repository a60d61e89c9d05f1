"""The environment every container of an XGBoostJob's pod gets (training-operator v1.9's
``xgboost.go``), in v1.9's order.

``MASTER_PORT`` (the Master's ``xgboostjob-port``), ``MASTER_ADDR`` (``<job>-master-0``, the
Master's service), ``WORLD_SIZE`` (all replicas), ``RANK`` (the index, plus the Master count
for a worker), ``PYTHONUNBUFFERED=1``; with more than one replica also ``WORKER_PORT`` (the
Worker's ``xgboostjob-port``) and ``WORKER_ADDRS`` (``<job>-worker-<i>`` for every replica but
the Master, comma-separated). Each variable is defined once (:mod:`tf_operator.controller.v1.envvar`).
"""

from __future__ import annotations

from tf_operator.apis.xgboost.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from tf_operator.apis.xgboost.v1.types import XGBoostJob
from tf_operator.common.jobcontroller.util import gen_general_name
from tf_operator.controller.v1.envvar import EnvEntry, put_env, value
from tf_operator.k8s.objects import Obj


class PortNotFoundError(LookupError):
    def __init__(self, rtype: str) -> None:
        super().__init__(
            f"port not found: no {DEFAULT_PORT_NAME} port on the {DEFAULT_CONTAINER_NAME} "
            f"container of {rtype}"
        )


def get_port(job: XGBoostJob, rtype: str) -> int:
    """``containerPort`` of the ``xgboostjob-port`` port of the ``xgboost`` container of
    ``rtype`` (always there once defaulted)."""
    spec = (job.spec.xgb_replica_specs or {}).get(rtype)
    port = None if spec is None else spec.container_port(DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME)
    if port is None:
        raise PortNotFoundError(rtype)
    return port


def total_replicas(job: XGBoostJob) -> int:
    return sum(spec.replicas or 0 for spec in job.replica_specs().values())


def pod_env(job: XGBoostJob, rt: str, index: int) -> list[EnvEntry]:
    """The variables pod ``index`` of replica type ``rt`` (lower case) gets, in v1.9's order."""
    rank = index
    if rt == REPLICA_TYPE_WORKER.lower():
        master = job.master_spec()
        rank += 0 if master is None else master.replicas or 0
    total = total_replicas(job)
    env = [
        value("MASTER_PORT", str(get_port(job, REPLICA_TYPE_MASTER))),
        value("MASTER_ADDR", gen_general_name(job.name, REPLICA_TYPE_MASTER.lower(), 0)),
        value("WORLD_SIZE", str(total)),
        value("RANK", str(rank)),
        value("PYTHONUNBUFFERED", "1"),
    ]
    if total > 1:
        workers = [
            gen_general_name(job.name, REPLICA_TYPE_WORKER.lower(), i) for i in range(total - 1)
        ]
        env.append(value("WORKER_PORT", str(get_port(job, REPLICA_TYPE_WORKER))))
        env.append(value("WORKER_ADDRS", ",".join(workers)))
    return env


def set_cluster_spec(template: Obj, job: XGBoostJob, rt: str, index: int) -> None:
    put_env(template, pod_env(job, rt, index))
