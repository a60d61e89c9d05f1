"""The environment every container of a PyTorchJob's pod gets (training-operator v1.9's
``envvar.go``, ``master.go`` and ``elastic.go``).

In this order: ``PYTHONUNBUFFERED=1``; with a Master, where to rendezvous and who the pod is
(``MASTER_PORT`` and ``PET_MASTER_PORT``: the Master's ``pytorchjob-port``, ``MASTER_ADDR`` and
``PET_MASTER_ADDR``: ``<job>-master-0``, the Master's service; ``WORLD_SIZE``: all replicas
times the processes per node when ``nprocPerNode`` is a number; ``RANK`` and ``PET_NODE_RANK``:
0 for the Master, index + 1 for a worker); ``PET_NPROC_PER_NODE`` (``spec.nprocPerNode``,
``auto`` by default); then torchrun's node count ``PET_NNODES`` (all replicas), or with an
elastic policy its rendezvous instead (``PET_RDZV_ENDPOINT``: ``rdzvHost`` or
``<job>-worker-0``, at ``rdzvPort`` or the Worker's port; ``PET_RDZV_BACKEND``, ``c10d`` by
default; ``PET_NNODES`` as ``min:max``; ``PET_MAX_RESTARTS``, ``PET_NPROC_PER_NODE``,
``PET_RDZV_ID``, ``PET_RDZV_CONF`` as ``k=v,...`` and ``PET_STANDALONE`` when given).
v1.9 appended these to what the template had, so a variable the user set was defined twice and
the operator's won; here the operator's replaces the user's in place, so each is defined once
(as D30 does for ``TF_CONFIG``).
"""

from __future__ import annotations

from tf_operator.apis.pytorch.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    RDZV_BACKEND_C10D,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from tf_operator.apis.pytorch.v1.types import ElasticPolicy, PyTorchJob
from tf_operator.common.jobcontroller.util import gen_general_name
from tf_operator.k8s.objects import Obj

EnvVar = tuple[str, str]


class PortNotFoundError(LookupError):
    def __init__(self, rtype: str) -> None:
        super().__init__(
            f"port not found: no {DEFAULT_PORT_NAME} port on the {DEFAULT_CONTAINER_NAME} "
            f"container of {rtype}"
        )


def get_port(job: PyTorchJob, rtype: str) -> int:
    """``containerPort`` of the ``pytorchjob-port`` port of the ``pytorch`` container of
    ``rtype`` (always there once defaulted)."""
    spec = (job.spec.pytorch_replica_specs or {}).get(rtype)
    port = None if spec is None else spec.container_port(DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME)
    if port is None:
        raise PortNotFoundError(rtype)
    return port


def total_replicas(job: PyTorchJob) -> int:
    return sum(spec.replicas or 0 for spec in job.replica_specs().values())


def nproc_per_node(job: PyTorchJob) -> int:
    """``spec.nprocPerNode`` as a number; 1 when it is ``auto``, ``cpu``, ``gpu`` or unset
    (torchrun then decides, and ``WORLD_SIZE`` counts nodes)."""
    try:
        return int(job.spec.nproc_per_node or "")
    except ValueError:
        return 1


def master_env(job: PyTorchJob, rt: str, index: int) -> list[EnvVar]:
    port = str(get_port(job, REPLICA_TYPE_MASTER))
    address = gen_general_name(job.name, REPLICA_TYPE_MASTER.lower(), 0)
    rank = str(index + 1 if rt == REPLICA_TYPE_WORKER.lower() else index)
    world_size = str(total_replicas(job) * nproc_per_node(job))
    return [
        ("MASTER_PORT", port),
        ("PET_MASTER_PORT", port),
        ("MASTER_ADDR", address),
        ("PET_MASTER_ADDR", address),
        ("WORLD_SIZE", world_size),
        ("RANK", rank),
        ("PET_NODE_RANK", rank),
    ]


def elastic_env(job: PyTorchJob, elastic: ElasticPolicy) -> list[EnvVar]:
    host = elastic.rdzv_host or f"{job.name}-{REPLICA_TYPE_WORKER.lower()}-0"
    port = elastic.rdzv_port
    if port is None:
        port = get_port(job, REPLICA_TYPE_WORKER)
    if elastic.min_replicas is None and elastic.max_replicas is None:
        worker = job.worker_spec()
        nnodes = str(0 if worker is None else worker.replicas or 0)
    else:
        nnodes = f"{elastic.min_replicas}:{elastic.max_replicas}"
    env = [
        ("PET_RDZV_ENDPOINT", f"{host}:{port}"),
        ("PET_RDZV_BACKEND", elastic.rdzv_backend or RDZV_BACKEND_C10D),
        ("PET_NNODES", nnodes),
    ]
    for name, value in (
        ("PET_MAX_RESTARTS", elastic.max_restarts),
        ("PET_NPROC_PER_NODE", elastic.n_proc_per_node),
        ("PET_RDZV_ID", elastic.rdzv_id),
    ):
        if value is not None:
            env.append((name, str(value)))
    if elastic.rdzv_conf is not None:
        conf = ",".join(f"{c.key}={c.value}" for c in elastic.rdzv_conf)
        env.append(("PET_RDZV_CONF", conf))
    if elastic.standalone:
        env.append(("PET_STANDALONE", ""))
    return env


def pod_env(job: PyTorchJob, rt: str, index: int) -> list[EnvVar]:
    """The variables pod ``index`` of replica type ``rt`` (lower case) gets, in v1.9's order."""
    env: list[EnvVar] = [("PYTHONUNBUFFERED", "1")]
    if job.has_master():
        env += master_env(job, rt, index)
    if job.spec.nproc_per_node is not None:
        env.append(("PET_NPROC_PER_NODE", job.spec.nproc_per_node))
    elastic = job.spec.elastic_policy
    if elastic is not None:
        env += elastic_env(job, elastic)
    else:
        env.append(("PET_NNODES", str(total_replicas(job))))
    return env


def set_cluster_spec(template: Obj, job: PyTorchJob, rt: str, index: int) -> None:
    """Put the pod's environment into every container of the template, each variable once:
    one the template set is replaced where it stood, the others are appended in order."""
    ours = dict(pod_env(job, rt, index))
    for container in (template.get("spec") or {}).get("containers") or []:
        kept: list[dict[str, object]] = []
        placed: set[str] = set()
        for entry in container.get("env") or []:
            name = entry.get("name")
            if name in ours:
                if name not in placed:
                    kept.append({"name": name, "value": ours[name]})
                    placed.add(name)
                continue
            kept.append(entry)
        kept += [{"name": n, "value": v} for n, v in ours.items() if n not in placed]
        container["env"] = kept
