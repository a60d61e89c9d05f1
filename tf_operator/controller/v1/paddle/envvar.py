"""The environment every container of a PaddleJob's pod gets (training-operator v1.9's
``envvar.go`` for Paddle), in v1.9's order.

``PYTHONUNBUFFERED=1``, ``PADDLE_JOB_ID`` (the job's name), ``PADDLE_NNODES`` (all replicas),
then where the master endpoint is, ``PADDLE_MASTER``: the pod that is it (the Master's pod 0,
or worker 0 of a job without a Master) gets its own IP through the downward API
(``POD_IP_DUMMY`` from ``status.podIP``) and ``$(POD_IP_DUMMY):<port>``, which the kubelet
expands; every other pod gets ``<job>-master-0:<port>`` (or ``<job>-worker-0:<port>``), the
port being the master type's ``master`` port (36543 when none is named so). With a Master,
the Master's pods also get ``PADDLE_SERVER_NUM=1`` and the workers ``PADDLE_TRAINER_NUM=1``.
Each variable is defined once (:mod:`tf_operator.controller.v1.envvar`).
"""

from __future__ import annotations

from tf_operator.apis.paddle.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from tf_operator.apis.paddle.v1.types import PaddleJob
from tf_operator.common.jobcontroller.util import gen_general_name
from tf_operator.controller.v1.envvar import EnvEntry, field_ref, put_env, value
from tf_operator.k8s.objects import Obj

POD_IP_VARIABLE = "POD_IP_DUMMY"


def get_port(job: PaddleJob, rtype: str) -> int:
    """``containerPort`` of the ``master`` port of the ``paddle`` container of ``rtype``; v1.9's
    36543 when there is none."""
    spec = (job.spec.paddle_replica_specs or {}).get(rtype)
    port = None if spec is None else spec.container_port(DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME)
    return DEFAULT_PORT if port is None else port


def total_replicas(job: PaddleJob) -> int:
    return sum(spec.replicas or 0 for spec in job.replica_specs().values())


def pod_env(job: PaddleJob, rt: str, index: int) -> list[EnvEntry]:
    """The variables pod ``index`` of replica type ``rt`` (lower case) gets, in v1.9's order."""
    env = [
        value("PYTHONUNBUFFERED", "1"),
        value("PADDLE_JOB_ID", job.name),
        value("PADDLE_NNODES", str(total_replicas(job))),
    ]
    has_master = job.master_spec() is not None
    master_type = REPLICA_TYPE_MASTER if has_master else REPLICA_TYPE_WORKER
    port = get_port(job, master_type)
    is_endpoint = index == 0 and (not has_master or rt == REPLICA_TYPE_MASTER.lower())
    if is_endpoint:
        env.append(field_ref(POD_IP_VARIABLE, "status.podIP"))
        env.append(value("PADDLE_MASTER", f"$({POD_IP_VARIABLE}):{port}"))
    else:
        address = gen_general_name(job.name, master_type.lower(), 0)
        env.append(value("PADDLE_MASTER", f"{address}:{port}"))
    if has_master:
        if rt == REPLICA_TYPE_MASTER.lower():
            env.append(value("PADDLE_SERVER_NUM", "1"))
        else:
            env.append(value("PADDLE_TRAINER_NUM", "1"))
    return env


def set_cluster_spec(template: Obj, job: PaddleJob, rt: str, index: int) -> None:
    put_env(template, pod_env(job, rt, index))
