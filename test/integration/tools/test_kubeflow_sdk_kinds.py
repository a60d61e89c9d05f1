"""The Kubeflow Training SDK v1.9 (``kubeflow-training`` 1.9.4, in a venv of its own) drives
XGBoostJobs, JAXJobs and PaddleJobs on our operator unchanged: ``create_job`` from its own
models, ``get_job``, ``wait_for_job_conditions``, ``is_job_succeeded``, ``list_jobs``,
``get_job_pod_names`` (the master role as v1.9 labels it), ``get_job_logs`` and ``delete_job``,
through a kubeconfig. Each job runs the kind's example program, whose replicas meet through the
environment the operator injects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.kubeflow_sdk import sdk_python
from test.integration.tools.conftest import create_namespace

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("kubeflow_sdk_kinds_driver.py")
NAMESPACE = "kubeflow-sdk-kinds"
IN_A_POD = Path("/var/run/secrets/kubernetes.io")

# kind -> job name, replicas, program (under examples/), the type whose logs are read, what
# its first pod says, the pods v1.9 labels job-role=master
CASES = {
    "XGBoostJob": (
        "sdk-xgb",
        {"Master": 1, "Worker": 2},
        "xgboost/smoke-dist/xgboost_dist.py",
        "Master",
        "tracker: 3 ranks at sdk-xgb-master-0:9999",
        ["sdk-xgb-master-0"],
    ),
    "JAXJob": (
        "sdk-jax",
        {"Worker": 3},
        "jax/cpu-demo/jax_dist.py",
        "Worker",
        "psum 3",
        ["sdk-jax-worker-0"],
    ),
    "PaddleJob": (
        "sdk-paddle",
        {"Worker": 2},
        "paddle/simple-cpu/run_check.py",
        "Worker",
        "PaddlePaddle works well on 2 nodes.",
        [],  # v1.9: the Master type only, and this job has none
    ),
}


@pytest.fixture(scope="module")
def namespace(cluster):
    create_namespace(cluster, NAMESPACE)
    return NAMESPACE


@pytest.mark.parametrize("kind", list(CASES))
def test_the_v19_sdk_drives_the_kind_unchanged(cluster, operator, namespace, kind, tmp_path):
    assert not IN_A_POD.exists(), f"{IN_A_POD} exists on this host: the SDK thinks it is in a pod"
    name, replicas, program, log_type, says, masters = CASES[kind]
    path = ROOT / "examples" / program
    config = {
        "kubeconfig": cluster.kubeconfig,
        "namespace": namespace,
        "kind": kind,
        "job": name,
        "replicas": replicas,
        "command": [sys.executable, "-u", path.name],
        "working_dir": str(path.parent),
        "log_replica": log_type,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [str(sdk_python()), str(DRIVER), str(tmp_path / "config.json"), str(report_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(report_path.read_text())

    assert report["got"] == {
        "kind": kind,
        "type": f"KubeflowOrgV1{kind}",
        "replica_types": sorted(replicas),
        "clean_pod_policy": "None",
    }
    assert ["Created", "True"] in report["conditions"]
    assert ["Succeeded", "True"] in report["conditions"]
    assert report["succeeded"] is True
    assert name in report["listed"]
    expected_pods = sorted(
        f"{name}-{rtype.lower()}-{i}" for rtype, n in replicas.items() for i in range(n)
    )
    assert report["pods"] == expected_pods
    assert report["master_pods"] == masters
    first = f"{name}-{log_type.lower()}-0"
    assert says in report["logs"][first], report["logs"]
    assert set(report["logs"]) == {p for p in expected_pods if p.split("-")[-2] == log_type.lower()}
    assert name not in report["after_delete"]
