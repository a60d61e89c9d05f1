"""Every TFJob dialect users send runs: a ``kubeflow.org/v1beta2`` job (v0.5.3's CRD served it
beside v1) and a training-operator v1.9 job, applied with kubectl (strict field validation) and
created through clients that ask for none (the official Python client, our SDK); each runs to
Succeeded on real processes with every field it carries stored and honoured.

The jobs are upstream's own examples with the image and command changed to run
``examples/v1/local-dist-training/dist_train.py`` here, as that example does: v0.5.3's
``examples/v1beta2/dist-mnist/tf_job_mnist.yaml`` (2 PS, 4 workers) and v1.9's
``examples/tensorflow/dist-mnist/tf_job_mnist.yaml`` (chief, PS, 2 workers) with the run policy
of its ``distribution_strategy/multi_worker_tfjob.yaml`` and every other v1.9 spec field.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from localcluster import testing
from tf_operator.sdk import TFJobClient

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE_DIR = ROOT / "examples/v1/local-dist-training"
TRAIN = [sys.executable, "-u", "dist_train.py"]
ARGS = {"PS": [], "Worker": ["--steps=20", "--step-delay=0.01"], "Chief": ["--eval-interval=0.2"]}


def replica(rtype: str, replicas: int) -> dict:
    """One replica spec of the examples, its container running dist_train.py here."""
    container = {
        "name": "tensorflow",
        "image": "python:3.11-slim",  # upstream: kubeflow/tf-dist-mnist-test
        "workingDir": str(EXAMPLE_DIR),
        "command": TRAIN,
        "args": ARGS[rtype],
    }
    return {
        "replicas": replicas,
        "restartPolicy": "Never",
        "template": {"spec": {"containers": [container]}},
    }


def v1beta2_job(name: str) -> dict:
    """v0.5.3's examples/v1beta2/dist-mnist."""
    return {
        "apiVersion": "kubeflow.org/v1beta2",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {"tfReplicaSpecs": {"PS": replica("PS", 2), "Worker": replica("Worker", 4)}},
    }


def v1_9_job(name: str) -> dict:
    """training-operator v1.9's examples/tensorflow/dist-mnist, with every v1.9 spec field."""
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {
            "runPolicy": {
                "cleanPodPolicy": "None",
                "ttlSecondsAfterFinished": 1,
                "activeDeadlineSeconds": 600,
                "backoffLimit": 2,
                "schedulingPolicy": {
                    "minAvailable": 4,
                    "queue": "default",
                    "minResources": {"cpu": "1"},
                    "priorityClass": "normal",
                    "scheduleTimeoutSeconds": 60,
                },
                "suspend": False,
                "managedBy": "kubeflow.org/training-operator",
            },
            "successPolicy": "",
            "enableDynamicWorker": False,
            "tfReplicaSpecs": {
                "Chief": replica("Chief", 1),
                "PS": replica("PS", 1),
                "Worker": replica("Worker", 2),
            },
        },
    }


@pytest.fixture(scope="module")
def op(proc, module_operator):
    operator = module_operator(proc, "--threadiness=2")
    proc.wait_for(operator.is_leader, 30, "leadership")
    return operator


@pytest.fixture(scope="module")
def custom(proc) -> k8s.CustomObjectsApi:
    """The official Python client: it asks for no field validation."""
    return k8s.CustomObjectsApi(k8s_config.new_client_from_config(proc.kubeconfig))


def kubectl(proc, tmp_path, *args: str, stdin: dict | None = None) -> str:
    files = []
    if stdin is not None:
        path = tmp_path / "job.yaml"
        path.write_text(yaml.safe_dump(stdin))
        files = ["-f", str(path)]
    out = testing.kubectl(proc.cluster, *args, *files)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_v1beta2_job_applied_with_kubectl_succeeds(proc, op, tmp_path):
    kubectl(proc, tmp_path, "apply", stdin=v1beta2_job("beta-kubectl"))
    proc.wait_condition("beta-kubectl", "Succeeded", 90)
    # every served version reads it, its own first
    table = kubectl(proc, tmp_path, "get", "tfjobs.v1beta2.kubeflow.org", "beta-kubectl")
    assert table.split("\n")[0].split() == ["NAME", "STATE", "AGE"]
    assert table.split("\n")[1].split()[:2] == ["beta-kubectl", "Succeeded"]
    beta = json.loads(
        kubectl(proc, tmp_path, "get", "tfjobs.v1beta2.kubeflow.org", "beta-kubectl", "-o", "json")
    )
    assert beta["apiVersion"] == "kubeflow.org/v1beta2"
    # as written, with the CRD's runPolicy default (D90)
    assert beta["spec"] == {**v1beta2_job("beta-kubectl")["spec"], "runPolicy": {"suspend": False}}
    assert proc.get("beta-kubectl")["apiVersion"] == "kubeflow.org/v1"
    # it ran as a v1 job does: its pods belong to the v1 TFJob
    owners = {p["metadata"]["ownerReferences"][0]["apiVersion"] for p in proc.pods("beta-kubectl")}
    assert owners == {"kubeflow.org/v1"}


def test_a_v1beta2_job_created_without_field_validation_succeeds(proc, op, custom):
    created = custom.create_namespaced_custom_object(
        "kubeflow.org", "v1beta2", "default", "tfjobs", v1beta2_job("beta-client")
    )
    assert created["apiVersion"] == "kubeflow.org/v1beta2"
    with TFJobClient(proc.kubeconfig, namespace="default") as sdk:
        assert sdk.create(v1beta2_job("beta-sdk"))["apiVersion"] == "kubeflow.org/v1beta2"
    for name in ("beta-client", "beta-sdk"):
        proc.wait_condition(name, "Succeeded", 120)
    got = custom.get_namespaced_custom_object(
        "kubeflow.org", "v1beta2", "default", "tfjobs", "beta-client"
    )
    assert got["status"]["conditions"][-1]["type"] == "Succeeded"


@pytest.mark.parametrize("how", ["kubectl", "client"])
def test_a_v1_9_job_runs_with_every_field_stored_and_honoured(proc, op, custom, tmp_path, how):
    name = f"v19-{how}"
    job = v1_9_job(name)
    if how == "kubectl":
        kubectl(proc, tmp_path, "apply", stdin=job)  # strict: every field is known
    else:
        custom.create_namespaced_custom_object(
            "kubeflow.org", "v1", "default", "tfjobs", copy.deepcopy(job)
        )
    assert proc.get(name)["spec"] == job["spec"]  # nothing pruned, nothing rewritten
    # runPolicy.ttlSecondsAfterFinished: 1 deletes the finished job (the top-level field is not
    # given); its events tell how it finished
    proc.wait_for(lambda: not proc.exists(name), 120, f"{name} finished and deleted")
    reasons = proc.wait_for(
        lambda: {e["reason"] for e in proc.events(name)} & {"TFJobSucceeded", "TFJobFailed"},
        30,
        f"the event of {name}'s end",
    )
    assert reasons == {"TFJobSucceeded"}
