"""ResourceQuota admission of pod creates says the same on both control planes: kube-apiserver's
ResourceQuota plugin (its limits once kube-controller-manager's quota controller has counted)
and the emulator's (``localcluster.controlplane.emulated.admission.quota``, D112): the same
403 Forbidden messages for a pod past the pod count, past a compute request or limit, and for a
pod that does not say what the quota counts."""

from __future__ import annotations

import pytest

from localcluster.testing import BACKENDS, cluster_fixture, wait_for

pytestmark = pytest.mark.integration

PODS = ("", "v1", "pods")
QUOTAS = ("", "v1", "resourcequotas")
NAMESPACES = ("", "v1", "namespaces")
SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")

cluster = cluster_fixture(backends=BACKENDS, kubelet="none")


def pod(name: str, requests: dict | None = None, limits: dict | None = None) -> dict:
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "main", "image": "i", "resources": resources}]},
    }


def refusal(client, ns: str, body: dict) -> str:
    try:
        client.create(PODS, ns, body)
    except Exception as err:  # noqa: BLE001 - the client's error type differs by control plane
        code = getattr(err, "code", None) or getattr(err, "status", None)
        assert code == 403, err
        return str(getattr(err, "message", "") or err)
    raise AssertionError(f"pod {body['metadata']['name']} was admitted")


def namespace_with_quota(cluster, ns: str, hard: dict) -> None:
    client = cluster.client
    client.create(NAMESPACES, None, {"metadata": {"name": ns}})
    client.create(QUOTAS, ns, {"metadata": {"name": "small"}, "spec": {"hard": hard}})

    def ready() -> bool:
        # kube-apiserver refuses pods until the namespace's service account exists and the
        # quota controller has counted (status unknown for quota); the emulator at once
        names = {s["metadata"]["name"] for s in client.list(SERVICE_ACCOUNTS, ns).items}
        status = client.get(QUOTAS, ns, "small").get("status") or {}
        counted = set(hard) <= set(status.get("used") or {})
        return cluster.control_plane != "real" or ("default" in names and counted)

    wait_for(ready, 60, what=f"{ns} ready for pods")


def test_the_same_refusals_on_both_control_planes(cluster):
    client = cluster.client
    namespace_with_quota(cluster, "counted", {"pods": "2"})
    client.create(PODS, "counted", pod("a"))
    client.create(PODS, "counted", pod("b"))
    assert refusal(client, "counted", pod("c")) == (
        'pods "c" is forbidden: exceeded quota: small, requested: pods=1, used: pods=2, '
        "limited: pods=2"
    )

    namespace_with_quota(cluster, "compute", {"requests.cpu": "1", "limits.memory": "1Gi"})
    client.create(PODS, "compute", pod("a", {"cpu": "600m"}, {"memory": "512Mi"}))
    assert refusal(client, "compute", pod("b", {"cpu": "500m"}, {"memory": "256Mi"})) == (
        'pods "b" is forbidden: exceeded quota: small, requested: requests.cpu=500m, '
        "used: requests.cpu=600m, limited: requests.cpu=1"
    )
    assert refusal(client, "compute", pod("b", {"cpu": "400m"}, {"memory": "600Mi"})) == (
        'pods "b" is forbidden: exceeded quota: small, requested: limits.memory=600Mi, '
        "used: limits.memory=512Mi, limited: limits.memory=1Gi"
    )
    assert refusal(client, "compute", pod("b", {"cpu": "400m"})) == (
        'pods "b" is forbidden: failed quota: small: must specify limits.memory for: main'
    )
    client.create(PODS, "compute", pod("b", {"cpu": "400m"}, {"memory": "512Mi"}))
