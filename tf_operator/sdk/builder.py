"""``tfjob(...)``: a valid TFJob dict for the common case, without writing YAML.

One container named ``tensorflow`` (the name the operator requires) per replica type, the same
image, command, env and resources everywhere; only the replica counts differ. The result is
checked with the operator's own validation (``tf_operator.apis``), so a mistake surfaces here
rather than as a ``Failed`` condition later. Anything unusual (per-type images, volumes, node
selectors) is one dict edit away: the result is plain JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tf_operator.apis.tensorflow.v1.constants import (
    API_VERSION,
    DEFAULT_CONTAINER_NAME,
    KIND,
    REPLICA_TYPE_CHIEF,
    REPLICA_TYPE_EVAL,
    REPLICA_TYPE_PS,
    REPLICA_TYPE_WORKER,
)
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.apis.tensorflow.validation.validation import validate_v1_tfjob

# Used when only a command is given: any image with a Python 3 on PATH will do.
DEFAULT_IMAGE = "python:3.11-slim"


def tfjob(
    name: str,
    image: str | None = None,
    command: Sequence[str] | None = None,
    args: Sequence[str] | None = None,
    *,
    ps: int = 1,
    workers: int = 2,
    chief: bool = False,
    evaluator: bool = False,
    namespace: str | None = None,
    env: Mapping[str, str] | Sequence[Mapping[str, Any]] | None = None,
    resources: Mapping[str, Any] | None = None,
    working_dir: str | None = None,
    restart_policy: str | None = None,
    clean_pod_policy: str | None = None,
    backoff_limit: int | None = None,
    active_deadline_seconds: int | None = None,
    ttl_seconds_after_finished: int | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A TFJob with ``ps`` parameter servers, ``workers`` workers and optionally one chief and
    one evaluator. ``env`` is a name->value mapping or a list of EnvVar dicts; ``resources`` is
    a ResourceRequirements dict (``{"limits": {"nvidia.com/gpu": 1}}``). Raises ``ValueError``
    when the job would be invalid."""
    if image is None and not command:
        raise ValueError("give an image, a command, or both")
    counts = {
        REPLICA_TYPE_PS: ps,
        REPLICA_TYPE_WORKER: workers,
        REPLICA_TYPE_CHIEF: 1 if chief else 0,
        REPLICA_TYPE_EVAL: 1 if evaluator else 0,
    }
    for rtype, count in counts.items():
        if count < 0:
            raise ValueError(f"{rtype} replicas must not be negative, got {count}")
    container = _container(image or DEFAULT_IMAGE, command, args, env, resources, working_dir)
    specs: dict[str, Any] = {}
    for rtype, count in counts.items():
        if count:
            spec: dict[str, Any] = {
                "replicas": count,
                "template": {"spec": {"containers": [dict(container)]}},
            }
            if restart_policy:
                spec["restartPolicy"] = restart_policy
            specs[rtype] = spec
    metadata: dict[str, Any] = {"name": name}
    for key, value in (("namespace", namespace), ("labels", labels), ("annotations", annotations)):
        if value:
            metadata[key] = dict(value) if isinstance(value, Mapping) else value
    job_spec: dict[str, Any] = {"tfReplicaSpecs": specs}
    optional: dict[str, str | int | None] = {
        "cleanPodPolicy": clean_pod_policy,
        "backoffLimit": backoff_limit,
        "activeDeadlineSeconds": active_deadline_seconds,
        "ttlSecondsAfterFinished": ttl_seconds_after_finished,
    }
    job_spec.update({k: v for k, v in optional.items() if v is not None})
    job = {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": job_spec}
    validate_v1_tfjob(TFJob.from_dict(job))
    return job


def _container(
    image: str,
    command: Sequence[str] | None,
    args: Sequence[str] | None,
    env: Mapping[str, str] | Sequence[Mapping[str, Any]] | None,
    resources: Mapping[str, Any] | None,
    working_dir: str | None,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": DEFAULT_CONTAINER_NAME, "image": image}
    if command:
        container["command"] = list(command)
    if args:
        container["args"] = list(args)
    if env:
        if isinstance(env, Mapping):
            container["env"] = [{"name": k, "value": str(v)} for k, v in env.items()]
        else:
            container["env"] = [dict(e) for e in env]
    if resources:
        container["resources"] = dict(resources)
    if working_dir:
        container["workingDir"] = working_dir
    return container
