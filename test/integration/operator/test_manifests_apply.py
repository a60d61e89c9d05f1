"""`kubectl apply -k` of the kustomize overlays against the local cluster."""

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("overlay", ["standalone", "gang-volcano"])
def test_apply_kustomize_overlay(tmp_path, overlay):
    from localcluster.cluster import LocalCluster

    with LocalCluster(kubelet="none") as cluster:
        env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": cluster.kubeconfig}
        out = subprocess.run(
            ["kubectl", "apply", "-k", str(ROOT / "manifests/overlays" / overlay)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        assert (
            "customresourcedefinition.apiextensions.k8s.io/tfjobs.kubeflow.org created"
            in out.stdout
        )
        assert "deployment.apps/tf-job-operator created" in out.stdout
        assert "clusterrole.rbac.authorization.k8s.io/tf-job-operator created" in out.stdout
        deploy = cluster.registry.get(("apps", "v1", "deployments"), "kubeflow", "tf-job-operator")
        assert deploy["spec"]["template"]["spec"]["serviceAccountName"] == "tf-job-operator"
        get = subprocess.run(
            ["kubectl", "get", "tfjobs", "-A"], capture_output=True, text=True, env=env, timeout=60
        )
        assert get.returncode == 0, get.stderr
