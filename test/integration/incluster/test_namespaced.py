"""``kubectl apply -k manifests/overlays/namespaced``: the operator runs with
``--namespace=$(KUBEFLOW_NAMESPACE)`` (expanded by the kubelet from the downward API) and a Role
in its namespace, runs a job there without a 403, and leaves other namespaces alone."""

import pytest

from localcluster.testing import wait_for

from .conftest import NAMESPACE, TFJOBS, in_cluster, needs_mount_namespaces

pytestmark = [pytest.mark.integration, needs_mount_namespaces]


def test_namespaced_operator_runs_jobs_of_its_namespace_only(control_plane, tmp_path):
    with in_cluster(control_plane, tmp_path) as incluster:
        applied = incluster.apply("namespaced")
        assert "role.rbac.authorization.k8s.io/tf-job-operator created" in applied
        assert "clusterrole" not in applied
        incluster.rollout()
        wait_for(incluster.leader, 60, what="a leader")
        (pod,) = incluster.operator_pods()
        args = pod["spec"]["containers"][0]["args"]
        assert "--namespace=$(KUBEFLOW_NAMESPACE)" in args
        logs = incluster.logs(NAMESPACE, pod["metadata"]["name"])
        assert "Scoping operator to namespace kubeflow" in logs  # the $(VAR) expanded
        incluster.submit_job("elsewhere", namespace="default")
        incluster.run_job("here", namespace=NAMESPACE)
        outside = incluster.client.get(TFJOBS, "default", "elsewhere")
        assert not (outside.get("status") or {}).get("conditions")  # not its namespace
        assert incluster.operator_responses(403) == 0
