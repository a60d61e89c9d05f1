"""Run in the Kubeflow Training SDK's own venv (``support.kubeflow_sdk``), not in the test venv:
drives TFJobs through ``kubeflow.training.TrainingClient`` v1.9 exactly as its users do, and
writes what each call returned as JSON for the test to judge.

    python kubeflow_sdk_driver.py CONFIG.json REPORT.json

CONFIG: ``kubeconfig``, ``namespace``, ``job`` (the name of the job this script creates),
``old_job`` (a v0.5.3-style job, without ``spec.runPolicy``, that the test created), ``command``
(the argv prefix that runs Python code in a container of the process kubelet).
"""

import json
import sys

from kubeflow.training import (
    KubeflowOrgV1ReplicaSpec,
    KubeflowOrgV1RunPolicy,
    KubeflowOrgV1TFJob,
    KubeflowOrgV1TFJobSpec,
    TrainingClient,
)
from kubernetes import client as k8s

HELLO = (
    "import json, os; task = json.loads(os.environ['TF_CONFIG'])['task']; "
    "print('hello from', task['type'], task['index'])"
)


def replica(command: list, replicas: int) -> KubeflowOrgV1ReplicaSpec:
    container = k8s.V1Container(
        name="tensorflow", image="tensorflow/tensorflow:2.16.1", command=[*command, HELLO]
    )
    return KubeflowOrgV1ReplicaSpec(
        replicas=replicas,
        restart_policy="Never",
        template=k8s.V1PodTemplateSpec(spec=k8s.V1PodSpec(containers=[container])),
    )


def main(config_path: str, report_path: str) -> None:
    with open(config_path) as source:
        config = json.load(source)
    name, old = config["job"], config["old_job"]
    client = TrainingClient(
        config_file=config["kubeconfig"], namespace=config["namespace"], job_kind="TFJob"
    )
    report: dict = {}

    job = KubeflowOrgV1TFJob(
        api_version="kubeflow.org/v1",
        kind="TFJob",
        metadata=k8s.V1ObjectMeta(name=name),
        spec=KubeflowOrgV1TFJobSpec(
            run_policy=KubeflowOrgV1RunPolicy(clean_pod_policy="None"),
            tf_replica_specs={
                "PS": replica(config["command"], 1),
                "Worker": replica(config["command"], 2),
            },
        ),
    )
    client.create_job(job)
    got = client.get_job(name)
    report["got"] = {
        "kind": got.kind,
        "clean_pod_policy": got.spec.run_policy.clean_pod_policy,
        "replica_types": sorted(got.spec.tf_replica_specs),
    }
    done = client.wait_for_job_conditions(name, wait_timeout=120, polling_interval=1)
    report["conditions"] = [(c.type, c.status) for c in done.status.conditions]
    report["replica_statuses"] = {
        rtype: status.succeeded for rtype, status in done.status.replica_statuses.items()
    }
    report["succeeded"] = client.is_job_succeeded(name)
    report["listed"] = sorted(j.metadata.name for j in client.list_jobs())
    report["pods"] = sorted(client.get_job_pod_names(name))
    report["master_pods"] = client.get_job_pod_names(name, is_master=True)
    report["worker_1"] = client.get_job_pod_names(name, replica_type="worker", replica_index=1)
    logs, _ = client.get_job_logs(name)  # the master's: worker 0 when there is no chief
    report["master_logs"] = logs
    logs, events = client.get_job_logs(
        name, is_master=False, replica_type="worker", follow=True, verbose=True
    )
    report["worker_logs"] = logs
    report["event_keys"] = sorted(events)

    old_job = client.get_job(old)
    report["old"] = {
        "run_policy": old_job.spec.run_policy.to_dict(),
        "succeeded": client.is_job_succeeded(old),
        "waited": [
            c.type
            for c in client.wait_for_job_conditions(
                old, wait_timeout=120, polling_interval=1
            ).status.conditions
        ],
    }

    client.delete_job(name)
    client.delete_job(old)
    report["after_delete"] = sorted(j.metadata.name for j in client.list_jobs())
    with open(report_path, "w") as out:
        json.dump(report, out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
