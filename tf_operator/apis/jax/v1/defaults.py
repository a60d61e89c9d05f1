"""Defaulting of a JAXJob, as training-operator v1.9's ``SetDefaults_JAXJob``.

Per replica spec ``replicas`` → 1, ``restartPolicy`` → ``Never`` and a
``jaxjob-port: 6666`` port on the ``jax`` container (container 0 when none has that
name). Defaults are applied in memory only. v1.9's ``cleanPodPolicy`` → ``None`` comes with
v1.9's defaults in the normalised run policy (:mod:`tf_operator.apis.common.v1.run_policy`).
v1.9 also rewrote replica-type keys into their CamelCase names; its webhook (and so the CRD
here) refuses any other spelling first, so nothing is left to rewrite.
"""

from __future__ import annotations

from tf_operator.apis.common.v1.defaults import set_default_port, set_default_replicas
from tf_operator.apis.jax.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    DEFAULT_RESTART_POLICY,
)
from tf_operator.apis.jax.v1.types import JAXJob


def set_defaults_jaxjob(job: JAXJob) -> None:
    """Apply v1.9's defaults of the replica specs to ``job`` in place."""
    for spec in (job.spec.jax_replica_specs or {}).values():
        if spec is None:
            continue
        set_default_replicas(spec, DEFAULT_RESTART_POLICY)
        set_default_port(spec.template, DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME, DEFAULT_PORT)
