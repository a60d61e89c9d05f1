"""The Kubeflow Training SDK v1.9 (``kubeflow-training`` 1.9.4, in a venv of its own) drives
TFJobs on our operator unchanged (issue 22): ``create_job``, ``get_job``,
``wait_for_job_conditions``, ``is_job_succeeded``, ``list_jobs``, ``get_job_pod_names``,
``get_job_logs`` and ``delete_job``, through a kubeconfig. A v0.5.3-style job (no
``spec.runPolicy``, which the SDK's model requires) is read back too: the CRD defaults
``runPolicy`` to ``{}`` (D90)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.kubeflow_sdk import sdk_python
from test.integration.tools.conftest import create_namespace

pytestmark = pytest.mark.integration

DRIVER = Path(__file__).with_name("kubeflow_sdk_driver.py")
NAMESPACE = "kubeflow-sdk"
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
IN_A_POD = Path("/var/run/secrets/kubernetes.io")


def old_style_job(name: str) -> dict:
    """A job as v0.5.3's users wrote it: run-policy fields on the spec, no runPolicy."""
    code = "import os; print(os.environ['TF_CONFIG'][:20])"
    container = {"name": "tensorflow", "image": "x", "command": [sys.executable, "-c", code]}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {
            "cleanPodPolicy": "None",
            "tfReplicaSpecs": {
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [container]}}}
            },
        },
    }


def test_the_v19_sdk_drives_tfjobs_unchanged(cluster, operator, tmp_path):
    # A host where process pods left this directory makes the SDK believe it runs in a pod
    # and fail at import (issue 27, item 9); say so rather than show its traceback.
    assert not IN_A_POD.exists(), f"{IN_A_POD} exists on this host: the SDK thinks it is in a pod"
    python = sdk_python()
    create_namespace(cluster, NAMESPACE)
    stored = cluster.client.create(TFJOBS, NAMESPACE, old_style_job("v053-style"))
    assert stored["spec"]["runPolicy"] == {"suspend": False}  # the CRD's default (D90)
    assert stored["spec"]["cleanPodPolicy"] == "None"

    config = {
        "kubeconfig": cluster.kubeconfig,
        "namespace": NAMESPACE,
        "job": "sdk-v19",
        "old_job": "v053-style",
        "command": [sys.executable, "-u", "-c"],
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [str(python), str(DRIVER), str(tmp_path / "config.json"), str(report_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(report_path.read_text())

    assert report["got"] == {
        "kind": "TFJob",
        "clean_pod_policy": "None",
        "replica_types": ["PS", "Worker"],
    }
    assert ["Created", "True"] in report["conditions"]
    assert ["Succeeded", "True"] in report["conditions"]
    assert report["replica_statuses"]["Worker"] >= 1  # worker 0 decided success
    assert report["succeeded"] is True
    assert report["listed"] == ["sdk-v19", "v053-style"]
    assert report["pods"] == ["sdk-v19-ps-0", "sdk-v19-worker-0", "sdk-v19-worker-1"]
    assert report["master_pods"] == ["sdk-v19-worker-0"]  # v1.9's job-role: worker 0, no chief
    assert report["worker_1"] == ["sdk-v19-worker-1"]
    assert report["master_logs"] == {"sdk-v19-worker-0": "hello from worker 0\n"}
    assert report["worker_logs"] == {
        "sdk-v19-worker-0": "hello from worker 0",
        "sdk-v19-worker-1": "hello from worker 1",
    }
    assert {"tfjob/sdk-v19", "pod/sdk-v19-worker-1"} <= set(report["event_keys"])  # verbose
    assert "[Pod sdk-v19-worker-1]: hello from worker 1" in done.stdout  # follow prints

    assert report["old"]["run_policy"]["suspend"] is False
    assert report["old"]["succeeded"] is True
    assert "Succeeded" in report["old"]["waited"]
    assert report["after_delete"] == []
