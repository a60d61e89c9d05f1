"""Discovery negotiation, OpenAPI documents and Table rendering (pure functions)."""

from __future__ import annotations

from localcluster.controlplane.emulated.crds import resource_type_for, version_priority
from localcluster.controlplane.emulated.resources import builtin_types
from localcluster.controlplane.emulated.serving import discovery, tables


def test_negotiate_aggregated_picks_first_supported():
    both = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
    assert discovery.negotiate_aggregated(both) == "v2"
    assert (
        discovery.negotiate_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
        )
        == "v2beta1"
    )
    assert discovery.negotiate_aggregated("application/json, */*") is None


def test_version_priority_order():
    assert sorted(["v1alpha1", "v1beta1", "v2", "v1", "foo"], key=version_priority) == [
        "v2",
        "v1",
        "v1beta1",
        "v1alpha1",
        "foo",
    ]


def test_openapi_document_has_patch_with_field_validation_per_kind():
    types = builtin_types()
    doc = discovery.openapi_document(types, "apps", "v1")
    kinds = {
        op["patch"]["x-kubernetes-group-version-kind"]["kind"]
        for path, op in doc["paths"].items()
        if "patch" in op
    }
    assert kinds == {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"}
    for op in doc["paths"].values():
        if "patch" in op:
            assert "fieldValidation" in [p["name"] for p in op["patch"]["parameters"]]
    index = discovery.openapi_index(types)["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/policy/v1beta1"} <= set(index)


def test_crd_printer_columns_and_json_path():
    crd = {
        "metadata": {"name": "ws.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "ws", "kind": "W"},
            "versions": [
                {
                    "name": "v1", "served": True, "storage": True,
                    "additionalPrinterColumns": [
                        {"name": "State", "type": "string", "jsonPath": ".status.conditions[-1:].type"},
                        {"name": "Size", "type": "integer", "jsonPath": ".spec.size", "priority": 1},
                    ],
                }
            ],
        },
    }  # fmt: skip
    rt = resource_type_for(crd)
    obj = {
        "metadata": {"name": "a"},
        "spec": {"size": 3},
        "status": {"conditions": [{"type": "Created"}, {"type": "Running"}]},
    }
    t = tables.table(rt, "v1", [obj], {"resourceVersion": "1"})
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "State", "Size"]
    assert t["columnDefinitions"][2]["priority"] == 1
    assert t["rows"][0]["cells"] == ["a", "Running", 3]
    assert tables.json_path(obj, ".status.conditions[0].type") == "Created"
    assert tables.json_path(obj, ".missing.x") is None


def test_human_duration():
    assert [tables.human_duration(s) for s in (5, 119, 600, 7200, 90000, 864000)] == [
        "5s",
        "119s",
        "10m",
        "120m",
        "25h",
        "10d",
    ]


def test_pod_table_columns():
    pods = next(rt for rt in builtin_types() if rt.plural == "pods")
    pod = {"metadata": {"name": "p", "creationTimestamp": "2020-01-01T00:00:00Z"}, "spec": {"containers": [{"name": "c"}], "nodeName": "n1"},
           "status": {"phase": "Running", "podIP": "10.0.0.1", "containerStatuses": [{"ready": True, "restartCount": 2, "state": {"running": {}}}]}}  # fmt: skip
    row = tables.table(pods, "v1", [pod], {})["rows"][0]["cells"]
    assert row[:4] == ["p", "1/1", "Running", "2"] and row[5:7] == ["10.0.0.1", "n1"]
    last = {"terminated": {"exitCode": 1, "finishedAt": "2020-01-01T00:00:00Z"}}
    pod["status"]["containerStatuses"][0]["lastState"] = last
    restarts = tables.table(pods, "v1", [pod], {})["rows"][0]["cells"][3]
    assert restarts.startswith("2 (") and restarts.endswith(" ago)")  # as kubectl 1.32 shows
