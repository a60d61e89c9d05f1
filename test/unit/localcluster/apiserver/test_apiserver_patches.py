"""Strategic merge, merge and JSON patch semantics (pure functions)."""

from __future__ import annotations

import pytest

from localcluster.apimachinery.patches import json_patch, merge_patch, strategic_merge
from localcluster.controlplane.emulated import StatusError


def test_merge_patch_replaces_lists_and_deletes_nulls():
    target = {"a": {"b": 1, "c": 2}, "l": [1, 2]}
    assert merge_patch(target, {"a": {"b": None, "d": 3}, "l": [3]}) == {
        "a": {"c": 2, "d": 3},
        "l": [3],
    }
    assert target == {"a": {"b": 1, "c": 2}, "l": [1, 2]}  # input untouched


def test_strategic_merge_by_keys():
    pod = {
        "metadata": {"finalizers": ["a"], "ownerReferences": [{"uid": "1", "name": "x"}]},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "i",
                    "ports": [{"containerPort": 80, "name": "http"}],
                    "volumeMounts": [{"mountPath": "/d", "name": "v"}],
                }
            ],
            "volumes": [{"name": "v", "emptyDir": {}}],
            "tolerations": [{"key": "a"}],
        },
        "status": {
            "conditions": [
                {"type": "Ready", "status": "False"},
                {"type": "PodScheduled", "status": "True"},
            ]
        },
    }
    patch = {
        "metadata": {
            "finalizers": ["b"],
            "ownerReferences": [{"uid": "1", "name": "y"}, {"uid": "2", "name": "z"}],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "ports": [{"containerPort": 81}],
                    "volumeMounts": [{"mountPath": "/d", "readOnly": True}],
                }
            ],
            "volumes": [{"name": "w", "configMap": {"name": "c"}}],
            "tolerations": [{"key": "b"}],
        },
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    out = strategic_merge(pod, patch, "Pod")
    assert out["metadata"]["finalizers"] == ["a", "b"]
    assert [(r["uid"], r["name"]) for r in out["metadata"]["ownerReferences"]] == [
        ("1", "y"),
        ("2", "z"),
    ]
    c = out["spec"]["containers"][0]
    assert c["image"] == "i" and [p["containerPort"] for p in c["ports"]] == [80, 81]
    assert c["volumeMounts"] == [{"mountPath": "/d", "name": "v", "readOnly": True}]
    assert [v["name"] for v in out["spec"]["volumes"]] == ["v", "w"]
    assert out["spec"]["tolerations"] == [{"key": "b"}]  # atomic list
    assert out["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "PodScheduled", "status": "True"},
    ]


def test_service_ports_merge_by_port():
    svc = {"spec": {"ports": [{"port": 80, "name": "a"}, {"port": 81}]}}
    out = strategic_merge(svc, {"spec": {"ports": [{"port": 81, "name": "b"}]}}, "Service")
    assert out["spec"]["ports"] == [{"port": 80, "name": "a"}, {"port": 81, "name": "b"}]


def test_directives():
    obj = {
        "spec": {
            "containers": [{"name": "a"}, {"name": "b"}],
            "m": {"x": 1, "y": 2},
            "args": ["1", "2", "3"],
        }
    }
    out = strategic_merge(obj, {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}, "Pod")
    assert out["spec"]["containers"] == [{"name": "b"}]
    out = strategic_merge(
        obj, {"spec": {"containers": [{"name": "c"}, {"$patch": "replace"}]}}, "Pod"
    )
    assert out["spec"]["containers"] == [{"name": "c"}]
    out = strategic_merge(obj, {"spec": {"m": {"$patch": "replace", "z": 3}}}, "Pod")
    assert out["spec"]["m"] == {"z": 3}
    out = strategic_merge(obj, {"spec": {"$retainKeys": ["m"], "m": {"x": 5}}}, "Pod")
    assert out["spec"] == {"m": {"x": 5, "y": 2}}
    out = strategic_merge(obj, {"spec": {"$deleteFromPrimitiveList/args": ["2"]}}, "Pod")
    assert out["spec"]["args"] == ["1", "3"]
    out = strategic_merge(
        obj, {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}}, "Pod"
    )
    assert "$setElementOrder/containers" not in out["spec"]


def test_json_patch_errors():
    assert json_patch({"a": 1}, [{"op": "replace", "path": "/a", "value": 2}]) == {"a": 2}
    with pytest.raises(StatusError) as e:
        json_patch({"a": 1}, [{"op": "remove", "path": "/b"}])
    assert e.value.code == 422
    with pytest.raises(StatusError) as e:
        json_patch({"a": 1}, {"op": "add"})
    assert e.value.code == 400


# ---- objects as deep as kube-apiserver stores (10,000 levels)


def _chain(levels: int, leaf: object) -> dict:
    value: object = leaf
    for _ in range(levels):
        value = {"a": value}
    return value  # type: ignore[return-value]  # levels >= 1


def _bottom(value: dict) -> object:
    while isinstance(value, dict) and "a" in value:
        value = value["a"]
    return value


def test_merge_and_strategic_patches_merge_any_depth():
    target = {"x": _chain(9_000, {"keep": 1, "drop": 2})}
    patch = {"x": _chain(9_000, {"drop": None, "add": [{"$patch": "x", "v": 1}]})}
    merged = merge_patch(target, patch)
    assert _bottom(merged["x"]) == {"keep": 1, "add": [{"$patch": "x", "v": 1}]}
    strategic = strategic_merge(target, patch, "ConfigMap")
    assert _bottom(strategic["x"]) == {"keep": 1, "add": [{"v": 1}]}  # directives stripped
    assert _bottom(target["x"]) == {"keep": 1, "drop": 2}  # input untouched


def test_json_patch_adds_values_of_any_depth():
    out = json_patch({"x": {}}, [{"op": "add", "path": "/x/deep", "value": _chain(5_000, 1)}])
    assert _bottom(out["x"]["deep"]) == 1


def test_a_copy_of_a_value_too_deep_to_copy_is_a_422():
    """D74: jsonpatch copies a ``copy`` operation's value by recursion."""
    with pytest.raises(StatusError) as e:
        json_patch({"x": _chain(5_000, 1)}, [{"op": "copy", "from": "/x", "path": "/y"}])
    assert (e.value.code, e.value.reason) == (422, "Invalid")
    assert "nested too deeply for this server" in e.value.message


def test_a_json_patch_result_deeper_than_kube_apiserver_decodes_is_a_422_on_patch():
    deep = _chain(5_000, 1)
    with pytest.raises(StatusError) as e:
        json_patch({"x": deep}, [{"op": "add", "path": "/x" + "/a" * 4_999 + "/b", "value": deep}])
    assert (e.value.code, e.value.reason) == (422, "Invalid")
    cause = e.value.status["details"]["causes"][0]
    assert cause["field"] == "patch" and cause["message"].startswith('Invalid value: "{\\"x\\":')
    assert e.value.message.startswith(' "" is invalid: patch: Invalid value: ')
    assert e.value.message.endswith(
        "couldn't get version/kind; json parse error: invalid character '{' exceeded max depth"
    )
