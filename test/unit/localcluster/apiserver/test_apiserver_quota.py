"""The emulator's ResourceQuota admission of pod creates, in kube-apiserver's words (its
ResourceQuota plugin, on by default): a pod past a quota's ``pods``, ``count/pods`` or compute
limits is refused with 403 Forbidden ``exceeded quota: <name>, requested: ..., used: ...,
limited: ...``; a pod leaving out a request the quota counts with ``failed quota: <name>: must
specify ...``; finished pods free their share, ``count/pods`` does not; raising the quota lets
the pod in at once; a scoped quota is not enforced (docs/emulator-differences.md)."""

from __future__ import annotations

import pytest

from localcluster.controlplane.emulated import Registry, StatusError

PODS = ("", "v1", "pods")
QUOTAS = ("", "v1", "resourcequotas")
NS = "default"


@pytest.fixture
def reg():
    r = Registry()
    yield r
    r.stop()


def pod(name: str, requests: dict | None = None, limits: dict | None = None, **extra) -> dict:
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    container = {"name": "main", "image": "i", "resources": resources}
    return {"metadata": {"name": name}, "spec": {"containers": [container], **extra}}


def quota(reg, hard: dict, name: str = "small", **spec) -> dict:
    return reg.create(QUOTAS, NS, {"metadata": {"name": name}, "spec": {"hard": hard, **spec}})


def refused(reg, body: dict) -> str:
    with pytest.raises(StatusError) as info:
        reg.create(PODS, NS, body)
    assert (info.value.code, info.value.reason) == (403, "Forbidden"), info.value.message
    return info.value.message


def test_a_pod_past_the_pod_count_is_refused_until_the_quota_is_raised(reg):
    stored = quota(reg, {"pods": 2})
    assert stored["spec"]["hard"] == {"pods": "2"}  # a canonical quantity, as stored
    reg.create(PODS, NS, pod("a"))
    reg.create(PODS, NS, pod("b"))
    assert refused(reg, pod("c")) == (
        'pods "c" is forbidden: exceeded quota: small, requested: pods=1, used: pods=2, '
        "limited: pods=2"
    )
    stored["spec"]["hard"]["pods"] = "3"
    reg.update(QUOTAS, NS, "small", stored)
    reg.create(PODS, NS, pod("c"))


def test_a_finished_pod_frees_its_share_of_pods_but_not_of_count_pods(reg):
    quota(reg, {"pods": 1})
    quota(reg, {"count/pods": 2}, name="objects")
    first = reg.create(PODS, NS, pod("a"))
    assert "exceeded quota: small" in refused(reg, pod("b"))
    first["status"] = {"phase": "Succeeded"}
    reg.update(PODS, NS, "a", first, subresource="status")
    reg.create(PODS, NS, pod("b"))
    message = refused(reg, pod("c"))
    assert "exceeded quota: objects, requested: count/pods=1, used: count/pods=2" in message


def test_compute_requests_and_limits_are_summed_in_the_quantities_own_form(reg):
    quota(reg, {"requests.cpu": "1", "limits.memory": "1Gi"})
    reg.create(PODS, NS, pod("a", {"cpu": "600m"}, {"memory": "512Mi"}))
    assert refused(reg, pod("b", {"cpu": "500m"}, {"memory": "256Mi"})) == (
        'pods "b" is forbidden: exceeded quota: small, requested: requests.cpu=500m, '
        "used: requests.cpu=600m, limited: requests.cpu=1"
    )
    assert refused(reg, pod("b", {"cpu": "400m"}, {"memory": "600Mi"})) == (
        'pods "b" is forbidden: exceeded quota: small, requested: limits.memory=600Mi, '
        "used: limits.memory=512Mi, limited: limits.memory=1Gi"
    )
    reg.create(PODS, NS, pod("b", {"cpu": "400m"}, {"memory": "512Mi"}))


def test_a_pod_that_does_not_say_what_the_quota_counts_is_refused(reg):
    quota(reg, {"cpu": "4", "limits.memory": "1Gi"})
    assert refused(reg, pod("a", {"cpu": "1"})) == (
        'pods "a" is forbidden: failed quota: small: must specify limits.memory for: main'
    )
    assert refused(reg, pod("a")) == (
        'pods "a" is forbidden: failed quota: small: must specify cpu for: main; '
        "limits.memory for: main"
    )


def test_quotas_of_other_namespaces_and_scoped_quotas_are_not_enforced(reg):
    reg.create(("", "v1", "namespaces"), None, {"metadata": {"name": "other"}})
    reg.create(QUOTAS, "other", {"metadata": {"name": "none"}, "spec": {"hard": {"pods": 0}}})
    quota(reg, {"pods": 0}, scopes=["BestEffort"])
    reg.create(PODS, NS, pod("a"))
