"""XGBoostJobs, JAXJobs and PaddleJobs on the local cluster, run by the real operator beside
TFJobs (one process, every controller): training-operator v1.9's own example manifest of each
kind (image and command adapted to the process kubelet: its program is the plain-Python one in
``examples/``), applied with kubectl, runs to Succeeded, the replicas having found each other
only through the environment the operator injects; kubectl lists it by v1.9's printer columns;
v1.9's framework counters count it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from localcluster import testing
from support.crd import JAX_CRD_FILE, PADDLE_CRD_FILE, XGBOOST_CRD_FILE, install_crds
from support.examples import run_here

from .conftest import wait_for

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
SCHEMES = (
    "--enable-scheme=tfjob",
    "--enable-scheme=xgboostjob",
    "--enable-scheme=jaxjob",
    "--enable-scheme=paddlejob",
)


@dataclass(frozen=True)
class Example:
    kind: str
    plural: str
    field: str
    container: str
    framework: str
    manifest: Path
    leader_pod: str  # the pod whose log tells the result
    # what the leader's log says once its replicas met and computed together
    says: tuple[str, ...]

    def __str__(self) -> str:
        return self.kind


EXAMPLES = (
    Example(
        "XGBoostJob",
        "xgboostjobs",
        "xgbReplicaSpecs",
        "xgboost",
        "xgboost",
        ROOT / "examples/xgboost/smoke-dist/xgboostjob.yaml",
        "master-0",
        (
            "tracker: 3 ranks at xgboost-dist-iris-test-train-master-0:9991; workers "
            "['xgboost-dist-iris-test-train-worker-0', 'xgboost-dist-iris-test-train-worker-1']",
            "round 7 rmse",
        ),
    ),
    Example(
        "JAXJob",
        "jaxjobs",
        "jaxReplicaSpecs",
        "jax",
        "jax",
        ROOT / "examples/jax/cpu-demo/demo.yaml",
        "worker-0",
        ("process 0/1 initialized, coordinator jaxjob-simple-worker-0:6666", "psum 2"),
    ),
    Example(
        "PaddleJob",
        "paddlejobs",
        "paddleReplicaSpecs",
        "paddle",
        "paddle",
        ROOT / "examples/paddle/simple-cpu/simple-cpu.yaml",
        "worker-0",
        ("node rank 0 of 2 in job paddle-simple-cpu", "allreduce 1", "works well on 2 nodes"),
    ),
)


@pytest.fixture(scope="module")
def cluster(proc):
    install_crds(proc.client, XGBOOST_CRD_FILE, JAX_CRD_FILE, PADDLE_CRD_FILE)
    proc.client.create(("", "v1", "namespaces"), None, {"metadata": {"name": "kubeflow"}})
    return proc


@pytest.fixture(scope="module")
def op(cluster, module_operator):
    operator = module_operator(cluster, *SCHEMES, "--no-leader-elect")
    for kind in ("XGBoostJob", "JAXJob", "PaddleJob"):
        operator.wait_log(f"Starting {kind} controller", 30)
    return operator


def kubectl(cluster, *args: str, stdin: str | None = None) -> str:
    out = testing.kubectl(cluster.cluster, *args, input=stdin)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_v1_9s_example_applied_with_kubectl_succeeds(cluster, op, example):
    job = yaml.safe_load(example.manifest.read_text())
    run_here(job, example.field, example.manifest.parent)
    name, ns = job["metadata"]["name"], job["metadata"].get("namespace", "default")
    assert f"{example.kind.lower()}.kubeflow.org/{name} created" in kubectl(
        cluster, "apply", "-f", "-", stdin=yaml.safe_dump(job)
    )

    def state() -> str | None:
        got = json.loads(kubectl(cluster, "get", example.plural, name, "-n", ns, "-o", "json"))
        conditions = (got.get("status") or {}).get("conditions") or []
        done = [c["type"] for c in conditions if c["type"] in ("Succeeded", "Failed")]
        return done[0] if done else None

    assert wait_for(state, 90, f"{example.kind} finished") == "Succeeded"
    table = kubectl(cluster, "get", example.plural, "-n", ns).splitlines()
    assert table[0].split() == ["NAME", "STATE", "AGE"]
    assert table[1].split()[:2] == [name, "Succeeded"]
    log = cluster.log(f"{name}-{example.leader_pod}", container=example.container, namespace=ns)
    for text in example.says:
        assert text in log, log
    reason = f"{example.kind}Succeeded"
    wait_for(lambda: reason in {e["reason"] for e in cluster.events(name, ns)}, 30, reason)
    metric = rf'training_operator_jobs_successful_total\{{framework="{example.framework}"\}} 1.0'
    assert re.search(metric, op.http("/metrics")[1])
