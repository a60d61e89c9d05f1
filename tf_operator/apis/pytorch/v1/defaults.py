"""Defaulting of a PyTorchJob, as training-operator v1.9's ``SetDefaults_PyTorchJob``.

Per replica spec ``replicas`` → 1, ``restartPolicy`` → ``OnFailure`` and a
``pytorchjob-port: 23456`` port on the ``pytorch`` container (container 0 when none has that
name); an elastic policy without bounds gets the Worker count as both (one bound given: it is
the other too); ``nprocPerNode`` → ``auto`` unless the deprecated
``elasticPolicy.nProcPerNode`` is given. Defaults are applied in memory only. v1.9's
``cleanPodPolicy`` → ``None`` comes with v1.9's defaults in the normalised run policy
(:mod:`tf_operator.apis.common.v1.run_policy`), which a PyTorchJob gets. v1.9 also rewrote
replica-type keys into their CamelCase names; its webhook (and so the CRD here) refuses any
other spelling first, so nothing is left to rewrite.
"""

from __future__ import annotations

from tf_operator.apis.common.v1.defaults import set_default_port, set_default_replicas
from tf_operator.apis.pytorch.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_NPROC_PER_NODE,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    DEFAULT_RESTART_POLICY,
)
from tf_operator.apis.pytorch.v1.types import PyTorchJob


def set_elastic_policy(job: PyTorchJob) -> None:
    """Fill the elastic policy's missing node bounds (v1.9's ``setElasticPolicy``)."""
    elastic = job.spec.elastic_policy
    if elastic is None:
        return
    if elastic.min_replicas is None and elastic.max_replicas is None:
        worker = job.worker_spec()
        replicas = None if worker is None else worker.replicas
        elastic.min_replicas = elastic.max_replicas = replicas
    elif elastic.min_replicas is None:
        elastic.min_replicas = elastic.max_replicas
    elif elastic.max_replicas is None:
        elastic.max_replicas = elastic.min_replicas


def set_default_nproc_per_node(job: PyTorchJob) -> None:
    elastic = job.spec.elastic_policy
    if (elastic is None or elastic.n_proc_per_node is None) and job.spec.nproc_per_node is None:
        job.spec.nproc_per_node = DEFAULT_NPROC_PER_NODE


def set_defaults_pytorchjob(job: PyTorchJob) -> None:
    """Apply v1.9's defaults of the replica specs and the elastic policy to ``job`` in place."""
    for spec in (job.spec.pytorch_replica_specs or {}).values():
        if spec is None:
            continue
        set_default_replicas(spec, DEFAULT_RESTART_POLICY)
        set_default_port(spec.template, DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME, DEFAULT_PORT)
    set_elastic_policy(job)
    set_default_nproc_per_node(job)
