"""Defaulting of an XGBoostJob, as training-operator v1.9's ``SetDefaults_XGBoostJob``.

Per replica spec ``replicas`` → 1, ``restartPolicy`` → ``Never`` and an
``xgboostjob-port: 9999`` port on the ``xgboost`` container (container 0 when none has that
name). Defaults are applied in memory only. v1.9's ``cleanPodPolicy`` → ``None`` comes with
v1.9's defaults in the normalised run policy (:mod:`tf_operator.apis.common.v1.run_policy`).
v1.9 also rewrote replica-type keys into their CamelCase names; its webhook (and so the CRD
here) refuses any other spelling first, so nothing is left to rewrite.
"""

from __future__ import annotations

from tf_operator.apis.common.v1.defaults import set_default_port, set_default_replicas
from tf_operator.apis.xgboost.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    DEFAULT_RESTART_POLICY,
)
from tf_operator.apis.xgboost.v1.types import XGBoostJob


def set_defaults_xgboostjob(job: XGBoostJob) -> None:
    """Apply v1.9's defaults of the replica specs to ``job`` in place."""
    for spec in (job.spec.xgb_replica_specs or {}).values():
        if spec is None:
            continue
        set_default_replicas(spec, DEFAULT_RESTART_POLICY)
        set_default_port(spec.template, DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME, DEFAULT_PORT)
