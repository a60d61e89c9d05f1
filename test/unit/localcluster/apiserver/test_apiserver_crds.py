"""CRD lifecycle in the registry: serving, status, schema defaulting and validation, deletion."""

from __future__ import annotations

import pytest

from localcluster.controlplane.emulated import Registry, StatusError

CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
WIDGETS = ("example.com", "v1", "widgets")


def widget_crd(scope: str = "Namespaced", status: bool = True) -> dict:
    version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "required": ["size"],
                        "properties": {
                            "size": {"type": "integer", "minimum": 1},
                            "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                            "extra": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    },
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            }
        },
        "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
    }
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "shortNames": ["wd"],
            },
            "versions": [version],
        },
    }


@pytest.fixture
def reg():
    r = Registry()
    yield r
    r.stop()


def test_crd_is_established_and_served_at_once(reg):
    with pytest.raises(StatusError) as e:
        reg.list(WIDGETS)
    assert e.value.code == 404
    crd = reg.create(CRDS, None, widget_crd())
    conds = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conds == {"NamesAccepted": "True", "Established": "True"}
    assert crd["status"]["acceptedNames"]["listKind"] == "WidgetList"
    assert crd["status"]["storedVersions"] == ["v1"] and crd["metadata"]["generation"] == 1
    assert reg.list(WIDGETS)[0] == []


def test_crd_name_must_match(reg):
    body = widget_crd()
    body["metadata"]["name"] = "wrong"
    with pytest.raises(StatusError) as e:
        reg.create(CRDS, None, body)
    assert e.value.code == 422


def test_custom_resource_defaulting_validation_and_status(reg):
    reg.create(CRDS, None, widget_crd())
    w = reg.create(
        WIDGETS, "default", {"metadata": {"name": "w"}, "spec": {"size": 2}, "status": {"x": 1}}
    )
    assert w["spec"]["color"] == "red" and "status" not in w and w["metadata"]["generation"] == 1
    assert w["apiVersion"] == "example.com/v1" and w["kind"] == "Widget"
    for bad in ({"size": "big"}, {"color": "red"}, {"size": 0}, {"size": 1, "color": "green"}):
        with pytest.raises(StatusError) as e:
            reg.create(WIDGETS, "default", {"metadata": {"name": "bad"}, "spec": bad})
        assert e.value.code == 422, bad
        assert e.value.status["details"]["causes"][0]["field"].startswith("spec.")
    w = reg.patch(
        WIDGETS, "default", "w", {"status": {"phase": "Ok"}}, "merge", subresource="status"
    )
    assert w["status"] == {"phase": "Ok"} and w["metadata"]["generation"] == 1
    w = reg.patch(
        WIDGETS, "default", "w", {"spec": {"size": 3}, "status": {"phase": "Ignored"}}, "merge"
    )
    assert (
        w["spec"]["size"] == 3
        and w["status"] == {"phase": "Ok"}
        and w["metadata"]["generation"] == 2
    )
    with pytest.raises(StatusError) as e:
        reg.patch(WIDGETS, "default", "w", {"spec": {"size": 4}}, "strategic")
    assert e.value.code == 415
    w = reg.patch(WIDGETS, "default", "w", {"spec": {"size": 5}}, "apply", field_manager="t")
    assert w["spec"]["size"] == 5


def test_nulls_the_schema_does_not_allow_are_defaulted_or_dropped(reg):
    # apiextensions-apiserver: a null where the schema is not nullable takes the default, or
    # is removed when there is none, before validation; a nullable field keeps its null
    crd = widget_crd()
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    props["properties"]["note"] = {"type": "string", "nullable": True}
    props["properties"]["limit"] = {"type": "integer", "minimum": 1}
    reg.create(CRDS, None, crd)
    spec = {"size": 2, "color": None, "limit": None, "note": None}
    w = reg.create(WIDGETS, "default", {"metadata": {"name": "w"}, "spec": spec})
    assert w["spec"] == {"size": 2, "color": "red", "note": None}


def test_crd_without_status_subresource_stores_status(reg):
    reg.create(CRDS, None, widget_crd(status=False))
    w = reg.create(
        WIDGETS, "default", {"metadata": {"name": "w"}, "spec": {"size": 1}, "status": {"a": 1}}
    )
    assert w["status"] == {"a": 1}
    with pytest.raises(StatusError):
        reg.patch(WIDGETS, "default", "w", {"status": {}}, "merge", subresource="status")


def test_cluster_scoped_crd(reg):
    reg.create(CRDS, None, widget_crd(scope="Cluster"))
    w = reg.create(WIDGETS, None, {"metadata": {"name": "w"}, "spec": {"size": 1}})
    assert "namespace" not in w["metadata"]


def test_deleting_crd_removes_resources_and_endpoint(reg):
    reg.create(CRDS, None, widget_crd())
    reg.create(WIDGETS, "default", {"metadata": {"name": "w"}, "spec": {"size": 1}})
    w = reg.watch(WIDGETS, resource_version=str(reg.resource_version))
    reg.delete(CRDS, None, "widgets.example.com")
    assert w.get(1)[0] == "DELETED"
    assert w.get(1) is None and w.closed
    with pytest.raises(StatusError) as e:
        reg.list(WIDGETS)
    assert e.value.code == 404
    reg.create(CRDS, None, widget_crd())
    assert reg.list(WIDGETS)[0] == []


def test_unknown_fields_are_pruned_or_rejected(reg):
    reg.create(CRDS, None, widget_crd())
    w = reg.create(
        WIDGETS,
        "default",
        {"metadata": {"name": "w"}, "spec": {"size": 1, "typo": 1, "extra": {"free": 1}}},
    )
    assert w["spec"] == {"size": 1, "color": "red", "extra": {"free": 1}}
    with reg.field_validation("Warn") as warnings:
        reg.patch(WIDGETS, "default", "w", {"spec": {"other": 2}, "top": 1}, "merge")
    assert warnings == ['unknown field "spec.other"', 'unknown field "top"']
    with pytest.raises(StatusError) as e, reg.field_validation("Strict"):
        reg.create(WIDGETS, "default", {"metadata": {"name": "x"}, "spec": {"size": 1, "typo": 1}})
    assert e.value.code == 400 and 'unknown field "spec.typo"' in e.value.message


def test_crd_group_must_be_a_domain_and_not_builtin(reg):
    body = widget_crd()
    body["spec"]["group"] = "example"
    body["metadata"]["name"] = "widgets.example"
    with pytest.raises(StatusError) as e:
        reg.create(CRDS, None, body)
    assert e.value.status["details"]["causes"][0]["field"] == "spec.group"
    body = widget_crd()
    body["spec"]["group"] = "apps.k8s.io"
    body["spec"]["names"]["plural"] = "deployments"
    body["metadata"]["name"] = "deployments.apps.k8s.io"
    body["metadata"]["annotations"] = {"api-approved.kubernetes.io": "unapproved, a test"}
    reg.create(CRDS, None, body)  # a different group from the built-in "apps" is fine


def test_scale_subresource_for_deployments_and_crds(reg):
    deploy = ("apps", "v1", "deployments")
    reg.create(
        deploy,
        "default",
        {
            "metadata": {"name": "d"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {
                    "metadata": {"labels": {"app": "d"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
    )
    s = reg.get_scale(deploy, "default", "d")
    assert (s["kind"], s["spec"]["replicas"], s["status"]["selector"]) == ("Scale", 1, "app=d")
    s = reg.patch_scale(deploy, "default", "d", {"spec": {"replicas": 3}}, "merge")
    d = reg.get(deploy, "default", "d")
    assert (
        s["spec"]["replicas"] == 3
        and d["spec"]["replicas"] == 3
        and d["metadata"]["generation"] == 2
    )
    with pytest.raises(StatusError) as e:
        reg.update_scale(
            deploy, "default", "d", {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 2}}
        )
    assert e.value.reason == "Conflict"
    body = widget_crd()
    body["spec"]["versions"][0]["subresources"]["scale"] = {
        "specReplicasPath": ".spec.size",
        "statusReplicasPath": ".status.size",
    }
    reg.create(CRDS, None, body)
    reg.create(WIDGETS, "default", {"metadata": {"name": "w"}, "spec": {"size": 2}})
    assert reg.get_scale(WIDGETS, "default", "w")["spec"]["replicas"] == 2
    reg.update_scale(WIDGETS, "default", "w", {"spec": {"replicas": 5}})
    assert reg.get(WIDGETS, "default", "w")["spec"]["size"] == 5
    with pytest.raises(StatusError) as e:
        reg.get_scale(("", "v1", "configmaps"), "default", "x")
    assert e.value.code == 404


def test_status_writes_are_validated_against_the_schema(reg):
    body = widget_crd()
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"] = {
        "type": "object",
        "properties": {"phase": {"type": "string", "enum": ["Ok", "Bad"]}},
    }
    reg.create(CRDS, None, body)
    reg.create(WIDGETS, "default", {"metadata": {"name": "w"}, "spec": {"size": 1}})
    with pytest.raises(StatusError) as e:
        reg.patch(
            WIDGETS, "default", "w", {"status": {"phase": "Weird"}}, "merge", subresource="status"
        )
    assert e.value.code == 422
    w = reg.patch(
        WIDGETS,
        "default",
        "w",
        {"status": {"phase": "Ok", "undeclared": 1}},
        "merge",
        subresource="status",
    )
    assert w["status"] == {"phase": "Ok"}


def test_a_crd_update_that_adds_a_default_is_read_in_stored_objects_without_a_write(reg):
    """kube-apiserver defaults what it reads from etcd with the storage version's schema: an
    object stored before a default was added reads with it, at the same resourceVersion and
    with no watch event; a value the object has is kept."""
    body = widget_crd()
    spec_schema = body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"]["shape"] = {"type": "string"}
    crd = reg.create(CRDS, None, body)
    reg.create(WIDGETS, "default", {"metadata": {"name": "old"}, "spec": {"size": 1}})
    reg.create(WIDGETS, "default", {"metadata": {"name": "set"}, "spec": {"size": 1, "shape": "x"}})
    before = {w["metadata"]["name"]: w["metadata"]["resourceVersion"] for w in reg.list(WIDGETS)[0]}
    _, list_rv = reg.list(WIDGETS)
    watch = reg.watch(WIDGETS, resource_version=list_rv)
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    props["properties"]["shape"] = {"type": "string", "default": "round"}
    reg.update(CRDS, None, "widgets.example.com", crd)
    assert reg.get(WIDGETS, "default", "old")["spec"] == {
        "size": 1,
        "color": "red",
        "shape": "round",
    }
    assert reg.get(WIDGETS, "default", "set")["spec"]["shape"] == "x"
    listed = {w["metadata"]["name"]: w for w in reg.list(WIDGETS)[0]}
    assert listed["old"]["spec"]["shape"] == "round"
    assert {n: w["metadata"]["resourceVersion"] for n, w in listed.items()} == before
    reg.create(WIDGETS, "default", {"metadata": {"name": "new"}, "spec": {"size": 1}})
    etype, first = watch.get(timeout=5) or ("none", {})
    assert (etype, first["metadata"]["name"]) == ("ADDED", "new")
    watch.close("test done")


def test_a_crd_update_that_leaves_the_schema_alone_replaces_no_stored_object(reg):
    crd = reg.create(CRDS, None, widget_crd())
    reg.create(WIDGETS, "default", {"metadata": {"name": "w"}, "spec": {"size": 1}})
    stored = reg.store.stored(("example.com", "widgets"), ("default", "w"))
    crd["spec"]["names"]["shortNames"] = ["wd", "wdg"]
    reg.update(CRDS, None, "widgets.example.com", crd)
    assert reg.store.stored(("example.com", "widgets"), ("default", "w")) is stored


@pytest.mark.parametrize(
    "group, annotation, refused",
    [
        ("scheduling.incubator.k8s.io", None, "Required value: protected groups must have"),
        ("k8s.io", "not a url", 'Invalid value: "not a url": protected groups must have'),
        ("x.kubernetes.io", "unapproved, experimental", None),
        ("x.k8s.io", "https://github.com/kubernetes/enhancements/pull/1111", None),
        ("scheduling.x-k8s.io", None, None),  # x-k8s.io is not a protected group
    ],
)
def test_crds_of_protected_groups_need_an_api_approval_annotation(group, annotation, refused):
    """As kube-apiserver: *.k8s.io and *.kubernetes.io CRDs name their API review (found when
    kube-batch's PodGroup CRD met the real control plane)."""
    registry = Registry()
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }
    if annotation is not None:
        crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": annotation}
    try:
        if refused is None:
            registry.create(("apiextensions.k8s.io", "v1", "customresourcedefinitions"), None, crd)
        else:
            with pytest.raises(StatusError) as caught:
                registry.create(
                    ("apiextensions.k8s.io", "v1", "customresourcedefinitions"), None, crd
                )
            assert caught.value.code == 422
            causes = caught.value.status["details"]["causes"]
            assert causes[0]["field"] == "metadata.annotations[api-approved.kubernetes.io]"
            assert causes[0]["message"].startswith(refused)
    finally:
        registry.stop()
