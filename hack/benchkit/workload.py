"""The benchmark's TFJobs, and the objects a bare client creates for one of them.

Every job is 1 PS + 4 workers by default. Workers exit 0 after ``run_seconds`` (the simulated
kubelet reads the run-seconds annotation); the PS runs until the operator deletes it
(CleanPodPolicy Running), so one lifecycle holds creates, a success and a cleanup.

``floor_*`` build what the floor client sends: pods and services shaped like the operator's
(same labels, owner reference, port, TF_CONFIG-sized environment), one event per object and a
status write, so the floor pays the same per-request cost in the API server as the operator.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

NAMESPACE = "default"
RUN_SECONDS_ANNOTATION = "localcluster.tf-operator.io/run-seconds"
PORT = 2222
COMPONENT = "tf-operator"


def job_names(count: int, prefix: str = "bench") -> list[str]:
    return [f"{prefix}-{i:05d}" for i in range(count)]


def tfjob_manifest(
    name: str, ps: int = 1, workers: int = 4, run_seconds: float = 1.0
) -> dict[str, Any]:
    """A TFJob whose workers exit 0 after ``run_seconds`` and whose PS runs until deleted."""

    def replica(replicas: int, annotations: dict[str, str]) -> dict[str, Any]:
        return {
            "replicas": replicas,
            "restartPolicy": "Never",
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {"containers": [{"name": "tensorflow", "image": "bench/tensorflow:none"}]},
            },
        }

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "tfReplicaSpecs": {
                "PS": replica(ps, {}),
                "Worker": replica(workers, {RUN_SECONDS_ANNOTATION: f"{run_seconds:g}"}),
            }
        },
    }


def replica_list(job: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """``(replica type in lower case, index, template)`` for every replica of a TFJob."""
    out = []
    for rtype, spec in sorted((job.get("spec") or {}).get("tfReplicaSpecs", {}).items()):
        for index in range(int(spec.get("replicas") or 1)):
            out.append((rtype.lower(), index, spec.get("template") or {}))
    return out


def minimum_requests_per_job(ps: int, workers: int) -> dict[str, int]:
    """The fewest API requests a v0.5.3-faithful operator makes for one job lifecycle.

    One create per pod and per service. Three status writes: startTime + Created with the
    first pods; Succeeded once worker 0 has exited 0; the terminal branch's write. After
    success the still running PS pods are deleted with their services (CleanPodPolicy
    Running; v0.5.3 read each live first, this operator deletes the cached one by UID:
    divergence D52). Events: one per create and delete, ExitedWithCode for worker 0 and
    TFJobSucceeded. Everything else comes from caches.
    """
    replicas = ps + workers
    return {
        "pods create": replicas,
        "services create": replicas,
        "tfjobs/status update": 3,
        "pods delete": ps,
        "services delete": ps,
        "events create": 2 * replicas + 2 * ps + 2,
    }


# ------------------------------------------------------------------ floor bodies


def _labels(job: str, rtype: str, index: int) -> dict[str, str]:
    return {
        "group-name": "kubeflow.org",
        "job-name": job,
        "tf-job-name": job,
        "tf-replica-type": rtype,
        "tf-replica-index": str(index),
    }


def _owner(job: dict[str, Any]) -> list[dict[str, Any]]:
    meta = job["metadata"]
    return [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def _tf_config(job: dict[str, Any], rtype: str, index: int) -> str:
    name = job["metadata"]["name"]
    cluster: dict[str, list[str]] = {}
    for other, i, _ in replica_list(job):
        cluster.setdefault(other, []).append(f"{name}-{other}-{i}.{NAMESPACE}.svc:{PORT}")
    return json.dumps({"cluster": cluster, "task": {"type": rtype, "index": index}})


def floor_pod(
    job: dict[str, Any], rtype: str, index: int, template: dict[str, Any]
) -> dict[str, Any]:
    name = job["metadata"]["name"]
    spec = json.loads(json.dumps(template.get("spec") or {}))
    for container in spec.get("containers") or []:
        container["env"] = [{"name": "TF_CONFIG", "value": _tf_config(job, rtype, index)}]
        container["ports"] = [{"name": "tfjob-port", "containerPort": PORT}]
    spec["restartPolicy"] = "Never"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-{rtype}-{index}",
            "namespace": NAMESPACE,
            "labels": _labels(name, rtype, index),
            "annotations": dict((template.get("metadata") or {}).get("annotations") or {}),
            "ownerReferences": _owner(job),
        },
        "spec": spec,
    }


def floor_service(job: dict[str, Any], rtype: str, index: int) -> dict[str, Any]:
    name = job["metadata"]["name"]
    labels = _labels(name, rtype, index)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": f"{name}-{rtype}-{index}",
            "namespace": NAMESPACE,
            "labels": labels,
            "ownerReferences": _owner(job),
        },
        "spec": {
            "clusterIP": "None",
            "selector": labels,
            "ports": [{"name": "tfjob-port", "port": PORT}],
        },
    }


def creation_bodies(job: dict[str, Any], events: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(plural, body)`` of every create a job's start takes, in v0.5.3's order: per replica
    type its pods, then its services, each followed by its event when ``events``."""
    name = job["metadata"]["name"]
    by_type: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for rtype, index, template in replica_list(job):
        by_type.setdefault(rtype, []).append((index, template))
    for rtype, replicas in by_type.items():
        for index, template in replicas:
            yield "pods", floor_pod(job, rtype, index, template)
            if events:
                message = f"Created pod: {name}-{rtype}-{index}"
                yield "events", floor_event(job, "SuccessfulCreatePod", message)
        for index, _ in replicas:
            yield "services", floor_service(job, rtype, index)
            if events:
                message = f"Created service: {name}-{rtype}-{index}"
                yield "events", floor_event(job, "SuccessfulCreateService", message)


def utc_stamp() -> str:
    """Now, as the API server's timestamps read (whole seconds, UTC)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def job_condition(kind: str, reason: str, message: str, stamp: str) -> dict[str, str]:
    """A true TFJob condition that changed at ``stamp``."""
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": message,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
    }


def floor_event(job: dict[str, Any], reason: str, message: str) -> dict[str, Any]:
    meta = job["metadata"]
    stamp = utc_stamp()
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": NAMESPACE},
        "involvedObject": {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "name": meta["name"],
            "namespace": NAMESPACE,
            "uid": meta["uid"],
            "resourceVersion": meta.get("resourceVersion"),
        },
        "reason": reason,
        "message": message,
        "type": "Normal",
        "source": {"component": COMPONENT},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


def floor_status(job: dict[str, Any]) -> dict[str, Any]:
    """The job with the first status the operator writes (startTime and Created)."""
    stamp = utc_stamp()
    message = f"TFJob {job['metadata']['name']} is created."
    condition = job_condition("Created", "TFJobCreated", message, stamp)
    return {**job, "status": {"conditions": [condition], "replicaStatuses": {}, "startTime": stamp}}
