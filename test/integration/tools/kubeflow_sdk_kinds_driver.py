"""Run in the Kubeflow Training SDK's own venv (``support.kubeflow_sdk``), not in the test venv:
drives one XGBoostJob, JAXJob or PaddleJob through ``kubeflow.training.TrainingClient`` v1.9
exactly as its users do (the job built from the SDK's own models), and writes what each call
returned as JSON for the test to judge.

    python kubeflow_sdk_kinds_driver.py CONFIG.json REPORT.json

CONFIG: ``kubeconfig``, ``namespace``, ``kind`` (``XGBoostJob``, ``JAXJob`` or ``PaddleJob``),
``job`` (the name), ``replicas`` (replica type -> count), ``command`` (a container's argv on
the process kubelet), ``working_dir``, ``log_replica`` (the replica type whose logs to read).
"""

import json
import sys

from kubeflow import training
from kubeflow.training import KubeflowOrgV1ReplicaSpec, KubeflowOrgV1RunPolicy, TrainingClient
from kubernetes import client as k8s

# kind -> (container, job model, spec model, the spec's replica-specs argument)
KINDS = {
    "XGBoostJob": (
        "xgboost",
        "KubeflowOrgV1XGBoostJob",
        "KubeflowOrgV1XGBoostJobSpec",
        "xgb_replica_specs",
    ),
    "JAXJob": ("jax", "KubeflowOrgV1JAXJob", "KubeflowOrgV1JAXJobSpec", "jax_replica_specs"),
    "PaddleJob": (
        "paddle",
        "KubeflowOrgV1PaddleJob",
        "KubeflowOrgV1PaddleJobSpec",
        "paddle_replica_specs",
    ),
}


def main(config_path: str, report_path: str) -> None:
    with open(config_path) as source:
        config = json.load(source)
    kind, name = config["kind"], config["job"]
    container_name, job_model, spec_model, specs_arg = KINDS[kind]
    client = TrainingClient(
        config_file=config["kubeconfig"], namespace=config["namespace"], job_kind=kind
    )

    def replica(count: int) -> KubeflowOrgV1ReplicaSpec:
        container = k8s.V1Container(
            name=container_name,
            image="python:3.11-slim",
            command=config["command"],
            working_dir=config["working_dir"],
        )
        return KubeflowOrgV1ReplicaSpec(
            replicas=count,
            restart_policy="Never",
            template=k8s.V1PodTemplateSpec(spec=k8s.V1PodSpec(containers=[container])),
        )

    spec = getattr(training, spec_model)(
        run_policy=KubeflowOrgV1RunPolicy(clean_pod_policy="None"),
        **{specs_arg: {rtype: replica(n) for rtype, n in config["replicas"].items()}},
    )
    job = getattr(training, job_model)(
        api_version="kubeflow.org/v1", kind=kind, metadata=k8s.V1ObjectMeta(name=name), spec=spec
    )
    report: dict = {}
    client.create_job(job)
    got = client.get_job(name)
    report["got"] = {
        "kind": got.kind,
        "type": type(got).__name__,
        "replica_types": sorted(getattr(got.spec, specs_arg)),
        "clean_pod_policy": got.spec.run_policy.clean_pod_policy,
    }
    done = client.wait_for_job_conditions(name, wait_timeout=120, polling_interval=1)
    report["conditions"] = [(c.type, c.status) for c in done.status.conditions]
    report["succeeded"] = client.is_job_succeeded(name)
    report["listed"] = sorted(j.metadata.name for j in client.list_jobs())
    report["pods"] = sorted(client.get_job_pod_names(name))
    report["master_pods"] = client.get_job_pod_names(name, is_master=True)
    logs, _ = client.get_job_logs(
        name, is_master=False, replica_type=config["log_replica"].lower(), follow=True
    )
    report["logs"] = logs
    client.delete_job(name)
    report["after_delete"] = sorted(j.metadata.name for j in client.list_jobs())
    with open(report_path, "w") as out:
        json.dump(report, out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
