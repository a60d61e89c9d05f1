"""``kubectl apply -k manifests/overlays/standalone`` on a fresh cluster: the Deployment rolls
out, the operator pod (the real ``tf-operator`` console script, unmodified in-cluster config,
its own service account under RBAC) becomes leader, runs a TFJob to Succeeded, is scraped
through its Service, and never gets a 403."""

import pytest

from localcluster.testing import wait_for

from .conftest import NAMESPACE, OPERATOR, metric, needs_mount_namespaces

pytestmark = [pytest.mark.integration, needs_mount_namespaces]


def test_operator_deployed_from_the_manifests_runs_a_job(incluster):
    applied = incluster.apply("standalone")
    assert f"deployment.apps/{OPERATOR} created" in applied
    assert f'deployment "{OPERATOR}" successfully rolled out' in incluster.rollout()

    table = incluster.kubectl("get", "deploy,rs,pods", "-n", NAMESPACE).stdout
    assert f"deployment.apps/{OPERATOR}   1/1     1            1" in table
    (pod,) = incluster.operator_pods()
    name = pod["metadata"]["name"]
    assert f"pod/{name}   1/1     Running" in table
    spec = pod["spec"]
    assert spec["serviceAccountName"] == OPERATOR
    assert any(v["name"].startswith("kube-api-access-") for v in spec["volumes"])

    leader = wait_for(incluster.leader, 60, what="a leader")
    assert leader.startswith(f"{name}_")
    logs = incluster.logs(NAMESPACE, name)
    assert "using in-cluster configuration" in logs

    incluster.run_job("incluster")
    # counted after the status write that the test saw
    wait_for(
        lambda: metric(incluster.scrape(), "tf_operator_jobs_successful") >= 1,
        30,
        what="the success counted",
    )
    assert metric(incluster.scrape(), "tf_operator_jobs_created") >= 1
    assert incluster.operator_responses(200) > 0
    assert incluster.operator_responses(403) == 0
    (pod,) = incluster.operator_pods()  # the same pod, never restarted by a probe
    assert pod["metadata"]["name"] == name
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
