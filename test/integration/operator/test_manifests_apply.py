"""`kubectl apply -k` of the kustomize overlays against the local cluster."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("overlay", ["standalone", "gang-volcano"])
def test_apply_kustomize_overlay(tmp_path, overlay):
    from localcluster.cluster import LocalCluster
    from localcluster.testing import kubectl

    with LocalCluster(kubelet="none") as cluster:
        manifests = str(ROOT / "manifests/overlays" / overlay)
        out = kubectl(cluster, "apply", "-k", manifests, home=str(tmp_path), check=True)
        assert (
            "customresourcedefinition.apiextensions.k8s.io/tfjobs.kubeflow.org created"
            in out.stdout
        )
        assert "deployment.apps/tf-job-operator created" in out.stdout
        assert "clusterrole.rbac.authorization.k8s.io/tf-job-operator created" in out.stdout
        deploy = cluster.client.get(("apps", "v1", "deployments"), "kubeflow", "tf-job-operator")
        assert deploy["spec"]["template"]["spec"]["serviceAccountName"] == "tf-job-operator"
        kubectl(cluster, "get", "tfjobs", "-A", home=str(tmp_path), check=True)  # the CRD serves
