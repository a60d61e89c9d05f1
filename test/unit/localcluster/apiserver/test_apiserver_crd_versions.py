"""A CRD served at several versions, as apiextensions-apiserver serves it with conversion None:
stored once at the storage version, read, written and watched at every served version with
``apiVersion`` rewritten, listed in discovery, ``status.storedVersions`` kept right."""

from __future__ import annotations

import copy

import pytest

from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.controlplane.emulated.serving import discovery

CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
NAME = "gadgets.example.com"
V1 = ("example.com", "v1", "gadgets")
V1BETA2 = ("example.com", "v1beta2", "gadgets")

SCHEMA = {
    "openAPIV3Schema": {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer"},
                    "queue": {"type": "string", "default": "default"},
                },
            },
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    }
}


def version(name: str, storage: bool, served: bool = True) -> dict:
    return {
        "name": name,
        "served": served,
        "storage": storage,
        "schema": copy.deepcopy(SCHEMA),
        "subresources": {"status": {}},
    }


def gadget_crd(*versions: dict) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": list(versions) or [version("v1", True), version("v1beta2", False)],
        },
    }


@pytest.fixture
def reg():
    r = Registry()
    r.create(CRDS, None, gadget_crd())
    yield r
    r.stop()


def gadget(name: str, api_version: str = "example.com/v1beta2") -> dict:
    return {
        "apiVersion": api_version,
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": {"size": 1},
    }


def stored(reg: Registry, name: str) -> dict:
    """The object as the store holds it (what etcd would)."""
    found = reg.store.stored(("example.com", "gadgets"), ("default", name))
    assert found is not None
    return found


def test_an_object_written_at_any_version_is_stored_at_the_storage_version(reg):
    created = reg.create(V1BETA2, "default", gadget("g"))
    assert created["apiVersion"] == "example.com/v1beta2"  # answered at the request's version
    assert stored(reg, "g")["apiVersion"] == "example.com/v1"
    assert created["spec"] == {"size": 1, "queue": "default"}  # that version's defaults


def test_every_served_version_reads_writes_and_watches_the_same_object(reg):
    w1 = reg.watch(V1, "default", resource_version=str(reg.resource_version))
    w2 = reg.watch(V1BETA2, "default", resource_version=str(reg.resource_version))
    reg.create(V1BETA2, "default", gadget("g"))
    assert reg.get(V1, "default", "g")["apiVersion"] == "example.com/v1"
    assert reg.get(V1BETA2, "default", "g")["apiVersion"] == "example.com/v1beta2"
    items, _ = reg.list(V1BETA2, "default")
    assert [i["apiVersion"] for i in items] == ["example.com/v1beta2"]
    # an update through v1, a status write through v1beta2
    current = reg.get(V1, "default", "g")
    current["spec"]["size"] = 2
    reg.update(V1, "default", "g", current)
    reg.patch(V1BETA2, "default", "g", {"status": {"phase": "Up"}}, "merge", "status")
    both = reg.get(V1BETA2, "default", "g")
    assert (both["spec"]["size"], both["status"]["phase"]) == (2, "Up")
    seen1 = [w1.get(1) for _ in range(3)]
    seen2 = [w2.get(1) for _ in range(3)]
    assert [e[0] for e in seen1] == ["ADDED", "MODIFIED", "MODIFIED"]
    assert {e[1]["apiVersion"] for e in seen1} == {"example.com/v1"}
    assert {e[1]["apiVersion"] for e in seen2} == {"example.com/v1beta2"}
    assert stored(reg, "g")["apiVersion"] == "example.com/v1"


def test_a_storage_version_that_is_not_preferred(reg):
    """v1 is preferred in discovery, v1beta2 stores: objects are kept at v1beta2."""
    reg.delete(CRDS, None, NAME)
    reg.create(CRDS, None, gadget_crd(version("v1", False), version("v1beta2", True)))
    reg.create(V1, "default", gadget("g", "example.com/v1"))
    assert stored(reg, "g")["apiVersion"] == "example.com/v1beta2"
    assert reg.get(V1, "default", "g")["apiVersion"] == "example.com/v1"
    group = discovery.api_group(reg.resource_types(), "example.com")
    assert group["preferredVersion"]["version"] == "v1"


def test_discovery_lists_every_served_version_and_no_other(reg):
    crd = reg.get(CRDS, None, NAME)
    crd["spec"]["versions"].append(version("v1alpha1", False, served=False))
    reg.update(CRDS, None, NAME, crd)
    types = reg.resource_types()
    group = discovery.api_group(types, "example.com")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta2"]
    for v in ("v1", "v1beta2"):
        resources = discovery.resource_list(types, "example.com", v)
        assert [r["name"] for r in resources["resources"]] == ["gadgets", "gadgets/status"]
    assert discovery.resource_list(types, "example.com", "v1alpha1") is None
    with pytest.raises(StatusError) as info:
        reg.list(("example.com", "v1alpha1", "gadgets"))
    assert info.value.code == 404
    aggregated = discovery.aggregated(types, False, "v2")
    (item,) = [i for i in aggregated["items"] if i["metadata"]["name"] == "example.com"]
    assert [v["version"] for v in item["versions"]] == ["v1", "v1beta2"]
    hashes = {
        r["storageVersionHash"]
        for v in ("v1", "v1beta2")
        for r in discovery.resource_list(types, "example.com", v)["resources"]
        if "storageVersionHash" in r
    }
    assert len(hashes) == 1  # one storage version, whichever version is asked for


def test_stored_versions_grow_with_the_storage_version_and_shrink_by_a_status_write(reg):
    crd = reg.get(CRDS, None, NAME)
    assert crd["status"]["storedVersions"] == ["v1"]
    crd["spec"]["versions"] = [version("v1", False), version("v1beta2", True)]
    crd = reg.update(CRDS, None, NAME, crd)
    assert crd["status"]["storedVersions"] == ["v1", "v1beta2"]
    # v1 may still hold objects: it cannot leave spec.versions yet
    crd["spec"]["versions"] = [version("v1beta2", True)]
    with pytest.raises(StatusError) as info:
        reg.update(CRDS, None, NAME, crd)
    assert info.value.code == 422
    assert 'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions' in (
        info.value.message
    )
    # a storage migration rewrote every object, then drops v1 from the stored versions ...
    status = reg.get(CRDS, None, NAME)
    status["status"]["storedVersions"] = ["v1beta2"]
    reg.update(CRDS, None, NAME, status, subresource="status")
    # ... which may not drop the storage version itself
    status = reg.get(CRDS, None, NAME)
    status["status"]["storedVersions"] = ["v1"]
    with pytest.raises(StatusError) as info:
        reg.update(CRDS, None, NAME, status, subresource="status")
    assert "must have the storage version v1beta2" in info.value.message
    # now v1 can go
    crd = reg.get(CRDS, None, NAME)
    crd["spec"]["versions"] = [version("v1beta2", True)]
    assert reg.update(CRDS, None, NAME, crd)["status"]["storedVersions"] == ["v1beta2"]


@pytest.mark.parametrize(
    "versions, message",
    [
        (
            [version("v1", True), version("v1", False)],
            "spec.versions: Invalid value: must contain unique version names",
        ),
        ([version("V1", True)], 'spec.versions[0].name: Invalid value: "V1": a DNS-1035 label'),
        (
            [version("v1", True), version("v2", True)],
            "must have exactly one version marked as storage version",
        ),
    ],
)
def test_bad_version_lists_are_refused(versions, message):
    r = Registry()
    try:
        with pytest.raises(StatusError) as info:
            r.create(CRDS, None, gadget_crd(*versions))
        assert info.value.code == 422
        assert message in info.value.message
    finally:
        r.stop()


def test_an_int_or_string_string_meets_its_pattern():
    r = Registry()
    crd = gadget_crd(version("v1", True))
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "amount"
    ] = {"x-kubernetes-int-or-string": True, "pattern": "^[0-9]+m?$"}
    r.create(CRDS, None, crd)
    try:
        for ok in (5, "500m"):
            body = gadget(f"ok-{ok}", "example.com/v1")
            body["spec"]["amount"] = ok
            assert r.create(V1, "default", body)
        body = gadget("bad", "example.com/v1")
        body["spec"]["amount"] = "two"
        with pytest.raises(StatusError) as info:
            r.create(V1, "default", body)
        assert "spec.amount in body should match '^[0-9]+m?$'" in info.value.message
    finally:
        r.stop()
