"""Defaulting of a PaddleJob, as training-operator v1.9's ``SetDefaults_PaddleJob``.

Per replica spec ``replicas`` → 1, ``restartPolicy`` → ``OnFailure`` and a
``master: 36543`` port on the ``paddle`` container (container 0 when none has that name); an
elastic policy without bounds gets the Worker count as both (one bound given: it is the other
too). Defaults are applied in memory only. v1.9's ``cleanPodPolicy`` → ``None`` comes with
v1.9's defaults in the normalised run policy (:mod:`tf_operator.apis.common.v1.run_policy`).
v1.9 also rewrote replica-type keys into their CamelCase names; its webhook (and so the CRD
here) refuses any other spelling first, so nothing is left to rewrite.
"""

from __future__ import annotations

from tf_operator.apis.common.v1.defaults import set_default_port, set_default_replicas
from tf_operator.apis.paddle.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    DEFAULT_RESTART_POLICY,
)
from tf_operator.apis.paddle.v1.types import PaddleJob


def set_defaults_paddlejob(job: PaddleJob) -> None:
    """Apply v1.9's defaults of the replica specs and the elastic policy to ``job`` in place."""
    for spec in (job.spec.paddle_replica_specs or {}).values():
        if spec is None:
            continue
        set_default_replicas(spec, DEFAULT_RESTART_POLICY)
        set_default_port(spec.template, DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME, DEFAULT_PORT)
    set_elastic_policy(job)


def set_elastic_policy(job: PaddleJob) -> None:
    """Fill the elastic policy's missing node bounds (v1.9's ``setPaddleElasticPolicy``)."""
    elastic = job.spec.elastic_policy
    if elastic is None:
        return
    if elastic.min_replicas is None and elastic.max_replicas is None:
        worker = job.worker_spec()
        elastic.min_replicas = elastic.max_replicas = None if worker is None else worker.replicas
    elif elastic.min_replicas is None:
        elastic.min_replicas = elastic.max_replicas
    elif elastic.max_replicas is None:
        elastic.max_replicas = elastic.min_replicas
