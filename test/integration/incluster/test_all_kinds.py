"""``kubectl apply -k manifests/overlays/all-kinds`` on a fresh cluster: the operator deployed
from the manifests, under the RBAC its components grant and nothing more, runs training-operator
v1.9's XGBoostJob, JAXJob and PaddleJob examples (their programs local) to Succeeded beside a
TFJob, and never gets a 403."""

import pytest
import yaml

from localcluster.testing import kubectl, wait_for
from support.examples import run_here

from .conftest import NAMESPACE, OPERATOR, ROOT, needs_mount_namespaces

pytestmark = [pytest.mark.integration, needs_mount_namespaces]

EXAMPLES = (
    ("xgboostjobs", "xgbReplicaSpecs", "examples/xgboost/smoke-dist/xgboostjob.yaml"),
    ("jaxjobs", "jaxReplicaSpecs", "examples/jax/cpu-demo/demo.yaml"),
    ("paddlejobs", "paddleReplicaSpecs", "examples/paddle/simple-cpu/simple-cpu.yaml"),
)


def test_every_kind_runs_from_the_all_kinds_overlay(incluster):
    applied = incluster.apply("all-kinds")
    for plural in ("tfjobs", "pytorchjobs", "xgboostjobs", "jaxjobs", "paddlejobs"):
        assert f"customresourcedefinition.apiextensions.k8s.io/{plural}.kubeflow.org" in applied
    assert f'deployment "{OPERATOR}" successfully rolled out' in incluster.rollout()
    submitted = []
    for plural, field, manifest in EXAMPLES:
        path = ROOT / manifest
        job = run_here(yaml.safe_load(path.read_text()), field, path.parent)
        namespace = job["metadata"].get("namespace", "default")
        kubectl(incluster.cluster, "apply", "-f", "-", input=yaml.safe_dump(job), check=True)
        submitted.append((plural, namespace, job["metadata"]["name"]))
    incluster.run_job("beside")  # a TFJob, as ever

    def succeeded(plural: str, namespace: str, name: str) -> bool:
        job = incluster.registry.get(("kubeflow.org", "v1", plural), namespace, name)
        conditions = (job.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Succeeded" and c["status"] == "True" for c in conditions)

    for plural, namespace, name in submitted:
        wait_for(lambda p=plural, ns=namespace, n=name: succeeded(p, ns, n), 90, f"{plural}/{name}")
    assert incluster.operator_responses(403) == 0
    logs = incluster.kubectl("logs", "-n", NAMESPACE, f"deployment/{OPERATOR}").stdout
    for kind in ("XGBoostJob", "JAXJob", "PaddleJob"):
        assert f"Starting {kind} controller" in logs
