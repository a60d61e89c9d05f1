"""The shipped TFJob CRD through real clients (issue 13 #5, #8, #9).

The official Python client's CustomObjectsApi asks for no field validation, so a CRD that
pinned the replica-type keys would prune ``Ps``/``WORKER`` silently; ours stores them intact,
and the ``tf-operator`` binary then creates the PS and worker pods. kubectl users hear about
invalid jobs at ``kubectl apply`` time, in the real server's words.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from localcluster import testing
from localcluster.cluster import LocalCluster

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[4]
CRD_FILE = ROOT / "manifests/base/crd.yaml"
OPERATOR = Path(sys.executable).with_name("tf-operator")


def replica(replicas: int) -> dict:
    return {
        "replicas": replicas,
        "restartPolicy": "Never",
        "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:1"}]}},
    }


def tfjob(name: str, **specs) -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {"tfReplicaSpecs": specs},
    }


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(kubelet="simulated") as c:
        out = testing.kubectl(c, "apply", "-f", str(CRD_FILE))
        assert out.returncode == 0, out.stderr
        yield c


@pytest.fixture(scope="module")
def custom(cluster) -> k8s.CustomObjectsApi:
    return k8s.CustomObjectsApi(k8s_config.new_client_from_config(cluster.kubeconfig))


def create(custom: k8s.CustomObjectsApi, body: dict) -> dict:
    return custom.create_namespaced_custom_object("kubeflow.org", "v1", "default", "tfjobs", body)


def test_python_client_stores_keys_in_any_case_intact(custom):
    body = tfjob("any-case", Ps=replica(1), WORKER=replica(2))
    create(custom, body)
    stored = custom.get_namespaced_custom_object(
        "kubeflow.org", "v1", "default", "tfjobs", "any-case"
    )
    assert stored["spec"]["tfReplicaSpecs"] == body["spec"]["tfReplicaSpecs"]


def test_python_client_gets_a_422_for_an_unknown_replica_type(custom):
    with pytest.raises(k8s.ApiException) as info:
        create(custom, tfjob("unknown-type", Worker=replica(1), Boss=replica(1)))
    assert info.value.status == 422
    status = yaml.safe_load(info.value.body)
    assert status["reason"] == "Invalid"
    assert status["details"]["causes"][0]["field"] == "spec.tfReplicaSpecs"
    # the shipped CRD's message is static (kube-apiserver's cost estimate of naming the key
    # exceeded the budget)
    assert status["details"]["causes"][0]["message"] == (
        "Invalid value: unknown replica type: expected PS, Worker, Chief, Master or Evaluator "
        "(in any case)"
    )


@pytest.mark.parametrize(
    ("name", "specs", "expected"),
    [
        ("UpperCase", {"Worker": replica(1)}, 'metadata.name: Invalid value: "UpperCase"'),
        ("my.job", {"Worker": replica(1)}, "TFJob names must be DNS-1035 labels"),
        ("huge", {"Worker": replica(2**31 - 1)}, "should be less than or equal to 1000"),
        (
            "two-chiefs",
            {"Chief": replica(1), "Master": replica(1)},
            "at most one of Chief and Master",
        ),
    ],
)
def test_kubectl_apply_reports_invalid_jobs(cluster, tmp_path, name, specs, expected):
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(tfjob(name, **specs)))
    out = testing.kubectl(cluster, "apply", "-f", str(manifest))
    assert out.returncode != 0
    assert f'The TFJob "{name}" is invalid' in out.stderr and expected in out.stderr


def test_kubectl_apply_reports_a_negative_backoff_limit(cluster, tmp_path):
    body = tfjob("negative", Worker=replica(1))
    body["spec"]["backoffLimit"] = -2
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(body))
    out = testing.kubectl(cluster, "apply", "-f", str(manifest))
    assert out.returncode != 0
    assert "spec.backoffLimit: Invalid value: -2" in out.stderr


@pytest.mark.skipif(not OPERATOR.exists(), reason="tf-operator is not installed")
def test_the_operator_runs_ps_and_workers_of_a_mixed_case_job(cluster, custom, tmp_path):
    create(custom, tfjob("mixed", Ps=replica(1), WORKER=replica(2)))
    log = open(tmp_path / "operator.log", "wb")  # noqa: SIM115 - closed below
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    proc = subprocess.Popen(
        [str(OPERATOR), f"--kubeconfig={cluster.kubeconfig}", "--monitoring-port=0"],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    try:
        wanted = {"mixed-ps-0", "mixed-worker-0", "mixed-worker-1"}

        def pods() -> set[str]:
            items, _ = cluster.registry.list(("", "v1", "pods"), "default")
            return {p["metadata"]["name"] for p in items} & wanted

        names = testing.wait_for(lambda: pods() == wanted and pods(), timeout=60, what="pods")
        assert names == wanted
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        print((tmp_path / "operator.log").read_text(errors="replace")[-4000:])  # shown on failure
