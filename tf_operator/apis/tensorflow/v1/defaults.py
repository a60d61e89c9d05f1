"""Defaulting of a TFJob, as v0.5.3's ``SetDefaults_TFJob``.

Replica-type keys normalised to their CamelCase names (``ps`` → ``PS``, ``WORKER`` →
``Worker``); then per replica spec ``replicas`` → 1, ``restartPolicy`` → ``Never`` and a
``tfjob-port: 2222`` port on the ``tensorflow`` container (container 0 when none has that
name). Defaults are applied in memory only. v0.5.3's ``cleanPodPolicy`` → ``Running`` is applied
where every run-policy field is read, in the job's normalised run policy
(:mod:`tf_operator.apis.common.v1.run_policy`), which knows both its placements and which
release's default the job asked for (divergence D56).

Difference from v0.5.3: keys are scanned in sorted order rather than Go's random map order.
Validation rejects two keys that normalise to the same type before defaulting ever runs, so
normalisation never drops a spec here (divergence D6).
"""

from __future__ import annotations

from tf_operator.apis.common.v1.defaults import set_default_port, set_default_replicas
from tf_operator.apis.tensorflow.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    DEFAULT_RESTART_POLICY,
    REPLICA_TYPE_ORDER,
)
from tf_operator.apis.tensorflow.v1.types import TFJob


def canonical_replica_type(key: str) -> str | None:
    """The CamelCase replica type that ``key`` spells in any case, or None if unknown."""
    for canonical in REPLICA_TYPE_ORDER:
        if key.lower() == canonical.lower():
            return canonical
    return None


def set_type_names_to_camel_case(job: TFJob) -> None:
    specs = job.spec.tf_replica_specs
    if not specs:
        return
    for canonical in REPLICA_TYPE_ORDER:
        for key in sorted(specs):
            if key != canonical and key.lower() == canonical.lower():
                specs[canonical] = specs.pop(key)
                break


def set_defaults_tfjob(job: TFJob) -> None:
    """Apply v0.5.3's defaults of the replica specs to ``job`` in place."""
    set_type_names_to_camel_case(job)
    for spec in (job.spec.tf_replica_specs or {}).values():
        if spec is None:
            continue
        set_default_replicas(spec, DEFAULT_RESTART_POLICY)
        set_default_port(spec.template, DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME, DEFAULT_PORT)
