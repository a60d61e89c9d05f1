"""ServiceAccount admission: default account, the projected token volume, automount opt-outs."""

import pytest

from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.controlplane.emulated.auth.admission import (
    TOKEN_MOUNT_PATH,
    PriorityClassAdmission,
    ServiceAccountAdmission,
)

PODS = ("", "v1", "pods")
SA = ("", "v1", "serviceaccounts")


@pytest.fixture
def registry():
    reg = Registry()
    reg.admission.append(ServiceAccountAdmission(reg, sleep=lambda _: None))
    reg.create(SA, "default", {"metadata": {"name": "default"}})
    yield reg
    reg.stop()


def pod(name, **spec):
    containers = [{"name": "c", "image": "x"}]
    return {"metadata": {"name": name}, "spec": {"containers": containers, **spec}}


def test_default_account_and_token_volume(registry):
    created = registry.create(
        PODS, "default", pod("p", initContainers=[{"name": "i", "image": "x"}])
    )
    spec = created["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    (volume,) = spec["volumes"]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == 21
    sources = volume["projected"]["sources"]
    assert sources[0] == {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}
    assert sources[1]["configMap"]["name"] == "kube-root-ca.crt"
    assert sources[2]["downwardAPI"]["items"][0]["path"] == "namespace"
    for container in spec["containers"] + spec["initContainers"]:
        assert container["volumeMounts"] == [
            {"name": volume["name"], "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}
        ]


def test_missing_account_is_forbidden(registry):
    with pytest.raises(StatusError) as err:
        registry.create(PODS, "default", pod("p", serviceAccountName="ghost"))
    assert err.value.code == 403
    assert err.value.message == (
        'pods "p" is forbidden: error looking up service account default/ghost: '
        'serviceaccount "ghost" not found'
    )


def test_missing_namespace_stays_a_404(registry):
    with pytest.raises(StatusError) as err:
        registry.create(PODS, "nowhere", pod("p"))
    assert err.value.code == 404


def test_automount_opt_outs(registry):
    registry.create(
        SA, "default", {"metadata": {"name": "quiet"}, "automountServiceAccountToken": False}
    )
    quiet = registry.create(PODS, "default", pod("a", serviceAccountName="quiet"))
    assert "volumes" not in quiet["spec"]
    loud = registry.create(
        PODS, "default", pod("b", serviceAccountName="quiet", automountServiceAccountToken=True)
    )
    assert loud["spec"]["volumes"][0]["name"].startswith("kube-api-access-")
    off = registry.create(PODS, "default", pod("c", automountServiceAccountToken=False))
    assert "volumes" not in off["spec"]


def test_own_mount_at_the_token_path_is_kept(registry):
    mine = {"name": "mine", "mountPath": TOKEN_MOUNT_PATH}
    spec = {"containers": [{"name": "c", "image": "x", "volumeMounts": [mine]}]}
    created = registry.create(PODS, "default", {"metadata": {"name": "p"}, "spec": spec})
    assert created["spec"]["containers"][0]["volumeMounts"] == [mine]
    assert "volumes" not in created["spec"]


# ---- Priority: the refusal of a class that does not exist ---------------------------------

PRIORITY_CLASSES = ("scheduling.k8s.io", "v1", "priorityclasses")


def test_a_pod_naming_a_missing_priority_class_is_forbidden_as_kube_apiserver_words_it():
    """kube-apiserver's Priority plugin refuses the create (403); the class made, the same pod
    is admitted; the two system classes always exist (D192 keeps the rest of the plugin)."""
    reg = Registry()
    reg.admission.append(PriorityClassAdmission(reg))
    try:
        with pytest.raises(StatusError) as err:
            reg.create(PODS, "default", pod("p", priorityClassName="nosuch"))
        assert err.value.code == 403
        assert err.value.message == (
            'pods "p" is forbidden: no PriorityClass with name nosuch was found'
        )
        reg.create(PRIORITY_CLASSES, None, {"metadata": {"name": "nosuch"}, "value": 10})
        assert reg.create(PODS, "default", pod("p", priorityClassName="nosuch"))
        assert reg.create(PODS, "default", pod("q", priorityClassName="system-node-critical"))
        assert reg.create(PODS, "default", pod("r"))  # no class named: nothing to check
    finally:
        reg.stop()
