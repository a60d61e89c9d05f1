"""``scheduling.k8s.io/v1beta1`` Workloads and PodGroups and the pod's ``spec.schedulingGroup``,
served and refused as kube-apiserver 1.37 does with ``GenericWorkload`` on: checked through the
kubeconfig with our API client and with kubectl, nothing of the emulator's insides."""

from __future__ import annotations

import json

import pytest

from tf_operator.k8s.client import ApiError, Resource, load_kube_client

pytestmark = pytest.mark.integration

PODGROUPS = Resource("scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup")
WORKLOADS = Resource("scheduling.k8s.io", "v1beta1", "workloads", "Workload")
PODS = Resource("", "v1", "pods", "Pod")


@pytest.fixture
def client(kubeconfig_path):
    kube = load_kube_client(str(kubeconfig_path))
    yield kube
    kube.close()


def group(name: str, policy: dict, **spec) -> dict:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"schedulingPolicy": policy, **spec},
    }


def refused(call) -> ApiError:
    with pytest.raises(ApiError) as info:
        call()
    assert info.value.code == 422
    return info.value


def test_a_gang_pod_group_is_served_and_only_its_min_count_may_change(client):
    groups = client.resource(PODGROUPS)
    created = groups.create(
        group(
            "g", {"gang": {"minCount": 2}}, workloadRef={"workloadName": "w", "templateName": "t"}
        ),
        "default",
    )
    assert created["metadata"]["generation"] == 1
    # PodGroupProtection admission: kept while pods name it (a controller lifts it)
    assert created["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]
    resized = groups.patch(
        "g", {"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}}, "default"
    )
    assert resized["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    assert resized["metadata"]["generation"] == 2
    err = refused(
        lambda: groups.patch(
            "g", {"spec": {"workloadRef": {"workloadName": "x", "templateName": "t"}}}, "default"
        )
    )
    assert "spec.workloadRef" in str(err) and "field is immutable" in str(err)
    err = refused(
        lambda: groups.patch(
            "g", {"spec": {"schedulingPolicy": {"gang": None, "basic": {}}}}, "default"
        )
    )
    assert "spec.schedulingPolicy.gang" in str(err)


@pytest.mark.parametrize(
    ("policy", "field", "says"),
    [
        ({}, "spec.schedulingPolicy", "must specify one of: `basic`, `gang`"),
        (
            {"gang": {"minCount": 0}},
            "spec.schedulingPolicy.gang.minCount",
            "greater than or equal to 1",
        ),
        (
            {"gang": {"minCount": 1}, "basic": {}},
            "spec.schedulingPolicy",
            "must specify exactly one of",
        ),
    ],
)
def test_a_policy_is_exactly_one_of_basic_and_gang(client, policy, field, says):
    err = refused(lambda: client.resource(PODGROUPS).create(group("bad", policy), "default"))
    assert field in str(err) and says in str(err)


def test_fields_of_gates_kept_off_are_forbidden(client):
    err = refused(
        lambda: client.resource(PODGROUPS).create(
            group("bad", {"basic": {}}, schedulingConstraints={"topology": [{"key": "zone"}]}),
            "default",
        )
    )
    assert "spec.schedulingConstraints" in str(err) and "Forbidden" in str(err)


def test_a_workload_keeps_its_templates(client):
    workloads = client.resource(WORKLOADS)
    body = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "w"},
        "spec": {
            "controllerRef": {"apiGroup": "kubeflow.org", "kind": "TFJob", "name": "j"},
            "podGroupTemplates": [
                {"name": "j-pgt-0", "schedulingPolicy": {"gang": {"minCount": 2}}}
            ],
        },
    }
    workloads.create(body, "default")
    templates = [{"name": "j-pgt-0", "schedulingPolicy": {"gang": {"minCount": 4}}}]
    resized = workloads.patch("w", {"spec": {"podGroupTemplates": templates}}, "default")
    assert resized["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 4
    added = [*templates, {"name": "other", "schedulingPolicy": {"basic": {}}}]
    err = refused(lambda: workloads.patch("w", {"spec": {"podGroupTemplates": added}}, "default"))
    assert "adding list items is not allowed" in str(err)
    err = refused(lambda: workloads.patch("w", {"spec": {"controllerRef": None}}, "default"))
    assert "spec.controllerRef" in str(err)
    bad = {
        **body,
        "metadata": {"name": "w2"},
        "spec": {"podGroupTemplates": [{"name": "Not_A_Label", "schedulingPolicy": {"basic": {}}}]},
    }
    err = refused(lambda: workloads.create(bad, "default"))
    assert "spec.podGroupTemplates[0].name" in str(err)


def test_a_pods_scheduling_group_is_checked_and_immutable(client):
    pods = client.resource(PODS)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "schedulingGroup": {"podGroupName": "g"},
            "containers": [{"name": "c", "image": "x"}],
        },
    }
    assert pods.create(pod, "default")["spec"]["schedulingGroup"] == {"podGroupName": "g"}
    err = refused(
        lambda: pods.patch("p", {"spec": {"schedulingGroup": {"podGroupName": "h"}}}, "default")
    )
    assert "pod updates may not change fields" in str(err)
    bad = {**pod, "metadata": {"name": "q"}, "spec": {**pod["spec"], "schedulingGroup": {}}}
    err = refused(lambda: pods.create(bad, "default"))
    assert "spec.schedulingGroup.podGroupName" in str(err)


def test_kubectl_knows_the_kinds(kubectl):
    listed = kubectl("api-resources", "--api-group=scheduling.k8s.io", "-o", "name")
    names = set(listed.stdout.split())
    assert {"podgroups.scheduling.k8s.io", "workloads.scheduling.k8s.io"} <= names
    out = kubectl("get", "podgroups.v1beta1.scheduling.k8s.io", "-o", "json")
    assert json.loads(out.stdout)["items"] == []
