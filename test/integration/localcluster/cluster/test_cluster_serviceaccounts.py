"""What the local cluster's controller manager does for service accounts: a ``default``
ServiceAccount and the ``kube-root-ca.crt`` ConfigMap in every namespace, kept there."""

import pytest

from localcluster.testing import cluster_fixture, wait_for

pytestmark = pytest.mark.integration

SA = ("", "v1", "serviceaccounts")
CM = ("", "v1", "configmaps")
NS = ("", "v1", "namespaces")
PODS = ("", "v1", "pods")


cluster = cluster_fixture(kubelet="none", secure_port=0)


def exists(registry, gvr, ns, name):
    try:
        return registry.get(gvr, ns, name)
    except Exception:  # noqa: BLE001
        return None


def test_every_namespace_gets_default_account_and_root_ca(cluster):
    reg = cluster.registry
    for ns in ("default", "kube-system"):
        assert exists(reg, SA, ns, "default")
        ca = exists(reg, CM, ns, "kube-root-ca.crt")
        assert ca["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")
    reg.create(NS, None, {"metadata": {"name": "fresh"}})
    # a pod created right away is admitted: admission waits for the default account
    created = reg.create(
        PODS,
        "fresh",
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
    )
    assert created["spec"]["serviceAccountName"] == "default"
    wait_for(lambda: exists(reg, CM, "fresh", "kube-root-ca.crt"), 10)


def test_deleted_or_edited_objects_come_back(cluster):
    reg = cluster.registry
    reg.delete(SA, "default", "default")
    wait_for(lambda: exists(reg, SA, "default", "default"), 10)
    ca = reg.get(CM, "default", "kube-root-ca.crt")
    ca["data"]["ca.crt"] = "tampered"
    reg.update(CM, "default", "kube-root-ca.crt", ca)
    wait_for(
        lambda: reg.get(CM, "default", "kube-root-ca.crt")["data"]["ca.crt"].startswith(
            "-----BEGIN"
        ),
        10,
    )


def test_kubernetes_service_points_at_the_secure_listener(cluster):
    reg = cluster.registry
    service = reg.get(("", "v1", "services"), "default", "kubernetes")
    port = cluster.server.secure_port
    assert service["spec"]["clusterIP"] == "10.96.0.1"
    assert service["spec"]["ports"][0]["port"] == port
    endpoints = reg.get(("", "v1", "endpoints"), "default", "kubernetes")
    assert endpoints["subsets"] == [
        {
            "addresses": [{"ip": "127.0.0.1"}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        }
    ]


def test_aggregated_cluster_role_collects_labelled_rules(cluster):
    reg = cluster.registry
    roles = ("rbac.authorization.k8s.io", "v1", "clusterroles")
    selector = {"matchLabels": {"example.com/aggregate-to-jobs": "true"}}
    reg.create(
        roles,
        None,
        {"metadata": {"name": "jobs"}, "aggregationRule": {"clusterRoleSelectors": [selector]}},
    )
    tfjobs = {"apiGroups": ["kubeflow.org"], "resources": ["tfjobs"], "verbs": ["get", "list"]}
    pods = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
    labels = {"example.com/aggregate-to-jobs": "true"}
    reg.create(roles, None, {"metadata": {"name": "b-tfjobs", "labels": labels}, "rules": [tfjobs]})
    reg.create(
        roles, None, {"metadata": {"name": "a-pods", "labels": labels}, "rules": [pods, tfjobs]}
    )
    reg.create(
        roles,
        None,
        {
            "metadata": {"name": "other"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
        },
    )
    wait_for(lambda: reg.get(roles, None, "jobs").get("rules") == [pods, tfjobs], 10)
    reg.delete(roles, None, "a-pods")
    wait_for(lambda: reg.get(roles, None, "jobs").get("rules") == [tfjobs], 10)
