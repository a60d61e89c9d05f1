"""The environment every container of a JAXJob's pod gets (training-operator v1.9's
``envvar.go`` for JAX), in v1.9's order: ``PYTHONUNBUFFERED=1``, ``COORDINATOR_PORT`` (the
Worker's ``jaxjob-port``), ``COORDINATOR_ADDRESS`` (``<job>-worker-0``, worker 0's service),
``NUM_PROCESSES`` (all replicas) and ``PROCESS_ID`` (the pod's index): what
``jax.distributed.initialize`` reads. Each variable is defined once
(:mod:`tf_operator.controller.v1.envvar`)."""

from __future__ import annotations

from tf_operator.apis.jax.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    REPLICA_TYPE_WORKER,
)
from tf_operator.apis.jax.v1.types import JAXJob
from tf_operator.common.jobcontroller.util import gen_general_name
from tf_operator.controller.v1.envvar import EnvEntry, put_env, value
from tf_operator.k8s.objects import Obj


class PortNotFoundError(LookupError):
    def __init__(self, rtype: str) -> None:
        super().__init__(
            f"default container port is not exposed: no {DEFAULT_PORT_NAME} port on the "
            f"{DEFAULT_CONTAINER_NAME} container of {rtype}"
        )


def get_port(job: JAXJob, rtype: str) -> int:
    """``containerPort`` of the ``jaxjob-port`` port of the ``jax`` container of ``rtype``
    (always there once defaulted)."""
    spec = (job.spec.jax_replica_specs or {}).get(rtype)
    port = None if spec is None else spec.container_port(DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME)
    if port is None:
        raise PortNotFoundError(rtype)
    return port


def total_replicas(job: JAXJob) -> int:
    return sum(spec.replicas or 0 for spec in job.replica_specs().values())


def pod_env(job: JAXJob, rt: str, index: int) -> list[EnvEntry]:
    """The variables pod ``index`` of replica type ``rt`` (lower case) gets, in v1.9's order."""
    return [
        value("PYTHONUNBUFFERED", "1"),
        value("COORDINATOR_PORT", str(get_port(job, REPLICA_TYPE_WORKER))),
        value("COORDINATOR_ADDRESS", gen_general_name(job.name, REPLICA_TYPE_WORKER.lower(), 0)),
        value("NUM_PROCESSES", str(total_replicas(job))),
        value("PROCESS_ID", str(index)),
    ]


def set_cluster_spec(template: Obj, job: JAXJob, rt: str, index: int) -> None:
    put_env(template, pod_env(job, rt, index))
