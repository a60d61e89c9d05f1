"""TF_CONFIG: the cluster description every TensorFlow pod receives in its environment.

Byte-exact with v0.5.3::

    {"cluster":{<rt>:[<host>:<port>,...],...},"task":{"type":<rt>,"index":<i>},"environment":"cloud"}

Compact JSON; cluster keys sorted (Go encodes map keys in byte order); every replica type but
Evaluator appears in ``cluster``; host = ``<job>-<rt>-<i>.<ns>.svc`` plus ``.<domain>`` when
``CUSTOM_CLUSTER_DOMAIN`` is set (read when a pass creates its first pod). Go's encoder
escapes ``<``, ``>``, ``&``, U+2028 and U+2029; so do we, so any string encodes as Go would.

The cluster part is the same for every pod of one job version: :class:`TFConfig` encodes it
once (at the first pod a pass creates) and splices each pod's task in, the same bytes as
encoding the whole value per pod.

With ``enableDynamicWorker`` (training-operator v1.9) every pod gets v1.9's sparse form
instead, which names only the pod itself and the PS, so workers can come and go::

    {"cluster":{"worker":{"<i>":<host>:<port>},"ps":[...]},"task":{"type":<rt>,"index":<i>}}

With v1.9's defaults (D59, D60) the Evaluator is listed in ``cluster`` too, and a job of one
replica in all gets no TF_CONFIG.
"""

from __future__ import annotations

import json
import os

from tf_operator.apis.tensorflow.v1.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    REPLICA_TYPE_EVAL,
    REPLICA_TYPE_PS,
    REPLICA_TYPE_WORKER,
)
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.common.jobcontroller.util import gen_general_name
from tf_operator.k8s.objects import Obj

ENV_CUSTOM_CLUSTER_DOMAIN = "CUSTOM_CLUSTER_DOMAIN"
TF_CONFIG = "TF_CONFIG"

_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


class PortNotFoundError(LookupError):
    def __init__(self) -> None:
        super().__init__("failed to found the port")


def get_port_from_tfjob(job: TFJob, rtype: str) -> int:
    """``containerPort`` of the ``tfjob-port`` port of the ``tensorflow`` container of ``rtype``."""
    spec = (job.spec.tf_replica_specs or {}).get(rtype)
    port = None if spec is None else spec.container_port(DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME)
    if port is None:
        raise PortNotFoundError()
    return port


def gen_cluster_spec(job: TFJob) -> dict[str, list[str]]:
    """``{rt: [endpoint, ...]}`` for every replica type except Evaluator (v1.9's defaults list
    it too, D59), keys sorted."""
    domain = os.environ.get(ENV_CUSTOM_CLUSTER_DOMAIN, "")
    with_evaluator = job.run_policy.defaults.v1_9
    cluster: dict[str, list[str]] = {}
    for rtype, spec in (job.spec.tf_replica_specs or {}).items():
        if (rtype == REPLICA_TYPE_EVAL and not with_evaluator) or spec is None:
            continue
        rt = rtype.lower()
        port = get_port_from_tfjob(job, rtype)
        endpoints = []
        for i in range(spec.replicas or 0):
            host = f"{gen_general_name(job.name, rt, i)}.{job.namespace}.svc"
            if domain:
                host += "." + domain
            endpoints.append(f"{host}:{port}")
        cluster[rt] = endpoints
    return dict(sorted(cluster.items()))


def go_json(value: object) -> str:
    """Compact JSON escaped like Go's ``encoding/json`` (key order as given)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escape in _GO_ESCAPES.items():
        text = text.replace(char, escape)
    return text


def gen_tf_config_json_str(job: TFJob, rt: str, index: str | int) -> str:
    """The TF_CONFIG value for pod ``index`` of replica type ``rt`` (lower case)."""
    return TFConfig(job).value(rt, index)


class TFConfig:
    """TF_CONFIG of the pods of one job version (see the module docstring); the cluster is
    built on first use. Create helpers may share one: a race builds the same value twice."""

    def __init__(self, job: TFJob) -> None:
        self._job = job
        self._cluster: dict[str, list[str]] | None = None
        self._encoded: str | None = None  # the cluster as JSON (not for the sparse form)

    def value(self, rt: str, index: str | int) -> str:
        """The TF_CONFIG value for pod ``index`` of replica type ``rt`` (lower case)."""
        cluster = self._cluster
        if cluster is None:
            cluster = self._cluster = gen_cluster_spec(self._job)
        task = {"type": rt, "index": int(index)}
        if self._job.spec.enable_dynamic_worker:
            return go_json({"cluster": sparse_cluster_spec(cluster, rt, int(index)), "task": task})
        encoded = self._encoded
        if encoded is None:
            encoded = self._encoded = go_json(cluster)
        # what go_json({"cluster": cluster, "task": task, "environment": "cloud"}) writes
        return f'{{"cluster":{encoded},"task":{go_json(task)},"environment":"cloud"}}'

    def apply(self, template: Obj, rt: str, index: int) -> None:
        """:func:`set_cluster_spec` for this job version."""
        set_cluster_spec(template, self._job, rt, index, self)


def sparse_cluster_spec(cluster: dict[str, list[str]], rt: str, index: int) -> dict[str, object]:
    """v1.9's sparse cluster of pod ``index`` of ``rt``: a worker knows itself and the PS
    (``null`` without PS, as Go writes a nil list), a PS only itself, others nobody."""
    worker, ps = REPLICA_TYPE_WORKER.lower(), REPLICA_TYPE_PS.lower()
    if rt == ps:
        return {"worker": {}, "ps": [cluster[ps][index]]}
    if rt == worker:
        return {"worker": {str(index): cluster[worker][index]}, "ps": cluster.get(ps)}
    return {"worker": {}, "ps": []}


def is_distributed(job: TFJob) -> bool:
    """More than one replica in all (v1.9's ``isDistributed``; a type without ``replicas``
    counts 1)."""
    specs = (job.spec.tf_replica_specs or {}).values()
    return sum(1 if s.replicas is None else s.replicas for s in specs if s is not None) != 1


def set_cluster_spec(
    template: Obj, job: TFJob, rt: str, index: str | int, config: TFConfig | None = None
) -> None:
    """Put TF_CONFIG into every container of the pod template (``config``: the job's, when
    the caller keeps one for the job's pods).

    v0.5.3 appended a second entry when the user had already set TF_CONFIG; here an existing
    entry is replaced in place, so the variable is defined exactly once (divergence D30).
    With v1.9's defaults a job of one replica gets none (D60).
    """
    if job.run_policy.defaults.v1_9 and not is_distributed(job):
        return
    value = (config or TFConfig(job)).value(rt, index)
    for container in (template.get("spec") or {}).get("containers") or []:
        env = container.get("env") or []
        others = [e for e in env if e.get("name") != TF_CONFIG]
        # where the first TF_CONFIG stood (nothing before it is removed), else at the end
        at = next((i for i, e in enumerate(env) if e.get("name") == TF_CONFIG), len(others))
        container["env"] = [*others[:at], {"name": TF_CONFIG, "value": value}, *others[at:]]
