"""Registry semantics: CRUD, concurrency, status isolation, watch, pagination, deletion, GC."""

from __future__ import annotations

import pytest

from localcluster.controlplane.emulated import Registry, StatusError

CM = ("", "v1", "configmaps")
PODS = ("", "v1", "pods")
NODES = ("", "v1", "nodes")
NS = ("", "v1", "namespaces")
SVC = ("", "v1", "services")
DEPLOY = ("apps", "v1", "deployments")
DEPLOY_SPEC = {
    "replicas": 1,
    "selector": {"matchLabels": {"app": "web"}},
    "template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    },
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def reg():
    r = Registry(watch_history=50, clock=FakeClock())
    yield r
    r.stop()


def pod(name: str, **extra) -> dict:
    body = {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }
    body.update(extra)
    return body


def test_seeded_namespaces(reg):
    names = {n["metadata"]["name"] for n in reg.list(NS)[0]}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
    assert reg.get(NS, None, "default")["status"]["phase"] == "Active"


def test_create_sets_server_fields_and_rejects_duplicates(reg):
    obj = reg.create(CM, "default", {"metadata": {"name": "a"}, "data": {"k": "v"}})
    m = obj["metadata"]
    assert obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1"
    assert m["namespace"] == "default" and m["uid"] and m["creationTimestamp"].endswith("Z")
    assert int(m["resourceVersion"]) == reg.resource_version
    with pytest.raises(StatusError) as e:
        reg.create(CM, "default", {"metadata": {"name": "a"}})
    assert (e.value.code, e.value.reason) == (409, "AlreadyExists")
    assert e.value.status["details"] == {"name": "a", "kind": "configmaps"}


def test_generate_name_and_generation(reg):
    obj = reg.create(DEPLOY, "default", {"metadata": {"generateName": "web-"}, "spec": DEPLOY_SPEC})
    assert obj["metadata"]["name"].startswith("web-") and len(obj["metadata"]["name"]) == 9
    assert obj["metadata"]["generation"] == 1
    name = obj["metadata"]["name"]
    obj = reg.patch(DEPLOY, "default", name, {"spec": {"replicas": 2}}, "merge")
    assert obj["metadata"]["generation"] == 2
    obj = reg.patch(DEPLOY, "default", name, {"metadata": {"labels": {"a": "b"}}}, "merge")
    assert obj["metadata"]["generation"] == 2
    obj = reg.patch(
        DEPLOY, "default", name, {"status": {"replicas": 2}}, "merge", subresource="status"
    )
    assert obj["metadata"]["generation"] == 2 and obj["status"] == {"replicas": 2}


def test_namespace_must_exist_and_names_are_validated(reg):
    with pytest.raises(StatusError) as e:
        reg.create(CM, "nope", {"metadata": {"name": "a"}})
    assert e.value.code == 404 and e.value.status["details"]["kind"] == "namespaces"
    with pytest.raises(StatusError) as e:
        reg.create(CM, "default", {"metadata": {"name": "Bad_Name"}})
    assert (
        e.value.code == 422 and e.value.status["details"]["causes"][0]["field"] == "metadata.name"
    )
    with pytest.raises(StatusError) as e:
        reg.create(SVC, "default", {"metadata": {"name": "a.b"}, "spec": {}})
    assert e.value.code == 422
    with pytest.raises(StatusError) as e:
        reg.create(CM, "default", {"metadata": {}})
    assert e.value.code == 422
    with pytest.raises(StatusError) as e:
        reg.create(
            PODS, "default", {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
        )
    assert e.value.status["details"]["causes"][0]["field"] == "spec.containers[0].image"


def test_body_kind_and_namespace_mismatch(reg):
    with pytest.raises(StatusError) as e:
        reg.create(CM, "default", {"kind": "Secret", "metadata": {"name": "a"}})
    assert e.value.code == 400
    with pytest.raises(StatusError) as e:
        reg.create(CM, "default", {"metadata": {"name": "a", "namespace": "kube-system"}})
    assert e.value.code == 400 and "namespace" in e.value.message
    with pytest.raises(StatusError):
        reg.create(CM, "default", ["not", "an", "object"])


def test_update_conflict_and_noop(reg):
    obj = reg.create(CM, "default", {"metadata": {"name": "a"}, "data": {"k": "1"}})
    rv = reg.resource_version
    same = reg.update(CM, "default", "a", obj)
    assert same["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
    assert reg.resource_version == rv
    obj["data"]["k"] = "2"
    new = reg.update(CM, "default", "a", obj)
    assert new["data"] == {"k": "2"} and new["metadata"]["uid"] == obj["metadata"]["uid"]
    with pytest.raises(StatusError) as e:
        reg.update(CM, "default", "a", obj)  # stale RV
    assert (e.value.code, e.value.reason) == (409, "Conflict")
    obj["metadata"]["resourceVersion"] = ""
    assert reg.update(CM, "default", "a", obj)["data"] == {"k": "2"}
    with pytest.raises(StatusError) as e:
        reg.update(CM, "default", "b", obj)
    assert e.value.code == 400
    with pytest.raises(StatusError) as e:
        reg.update(CM, "default", "zz", {"metadata": {"name": "zz"}})
    assert e.value.code == 404


def test_status_subresource_isolation(reg):
    p = reg.create(PODS, "default", pod("p", status={"phase": "Running"}))
    assert p["status"]["phase"] == "Pending"  # create resets status
    p["status"]["phase"] = "Running"
    p["spec"]["containers"][0]["image"] = "other"
    p2 = reg.update(PODS, "default", "p", p, subresource="status")
    assert p2["status"]["phase"] == "Running" and p2["spec"]["containers"][0]["image"] == "busybox"
    p2["status"]["phase"] = "Failed"
    p2["metadata"]["labels"] = {"a": "b"}
    p3 = reg.update(PODS, "default", "p", p2)
    assert p3["status"]["phase"] == "Running" and p3["metadata"]["labels"] == {"a": "b"}


def test_list_selectors_and_pagination(reg):
    for i in range(7):
        labels = {"app": "web" if i % 2 else "db", "tier": str(i)}
        reg.create(PODS, "default", pod(f"p{i}", metadata={"name": f"p{i}", "labels": labels}))
    reg.create(PODS, "kube-system", pod("sys"))
    names = lambda items: [i["metadata"]["name"] for i in items]  # noqa: E731
    assert names(reg.list(PODS, "default", label_selector="app=web")[0]) == ["p1", "p3", "p5"]
    assert names(reg.list(PODS, "default", label_selector="app in (web),tier notin (1,3)")[0]) == [
        "p5"
    ]
    assert names(reg.list(PODS, "default", label_selector="app!=web,!missing,tier")[0]) == [
        "p0",
        "p2",
        "p4",
        "p6",
    ]
    assert len(reg.list(PODS)[0]) == 8
    assert names(reg.list(PODS, field_selector="metadata.namespace=kube-system")[0]) == ["sys"]
    assert names(
        reg.list(PODS, "default", field_selector="metadata.name=p2,status.phase=Pending")[0]
    ) == ["p2"]
    assert reg.list(PODS, "default", field_selector="spec.nodeName=")[0]
    with pytest.raises(StatusError):
        reg.list(PODS, label_selector="a in (b")
    items, rv, token, remaining = reg.list_page(PODS, "default", limit=3)
    assert names(items) == ["p0", "p1", "p2"] and remaining == 4 and token
    items, _, token, remaining = reg.list_page(PODS, "default", limit=3, continue_token=token)
    assert names(items) == ["p3", "p4", "p5"] and remaining == 1
    items, _, token, _ = reg.list_page(PODS, "default", limit=3, continue_token=token)
    assert names(items) == ["p6"] and token is None


def test_continue_token_expires_after_compaction(reg):
    for i in range(3):
        reg.create(CM, "default", {"metadata": {"name": f"c{i}"}})
    _, _, token, _ = reg.list_page(CM, "default", limit=1)
    reg.create(CM, "default", {"metadata": {"name": "later"}})
    reg.compact()
    with pytest.raises(StatusError) as e:
        reg.list_page(CM, "default", limit=1, continue_token=token)
    assert (e.value.code, e.value.reason) == (410, "Expired")


def test_watch_replay_live_and_selector_transitions(reg):
    reg.create(CM, "default", {"metadata": {"name": "a", "labels": {"x": "1"}}})
    _, rv = reg.list(CM, "default")
    reg.create(CM, "default", {"metadata": {"name": "b", "labels": {"x": "1"}}})
    w = reg.watch(CM, "default", resource_version=rv, label_selector="x=1")
    assert w.get(1)[0] == "ADDED"
    reg.patch(CM, "default", "a", {"metadata": {"labels": {"x": "2"}}}, "merge")
    etype, obj = w.get(1)
    assert etype == "DELETED" and obj["metadata"]["name"] == "a"
    reg.patch(CM, "default", "a", {"metadata": {"labels": {"x": "1"}}}, "merge")
    assert w.get(1)[0] == "ADDED"
    reg.create(CM, "kube-system", {"metadata": {"name": "other", "labels": {"x": "1"}}})
    reg.delete(CM, "default", "b")
    etype, obj = w.get(1)
    assert etype == "DELETED" and obj["metadata"]["name"] == "b"
    assert int(obj["metadata"]["resourceVersion"]) == reg.resource_version
    assert w.get(0.01) is None
    w.stop()
    assert reg.watch_count() == 0


def test_watch_without_rv_sends_synthetic_adds(reg):
    reg.create(CM, "default", {"metadata": {"name": "a"}})
    w = reg.watch(CM, "default")
    assert w.get(1)[1]["metadata"]["name"] == "a"
    assert w.get(0.01) is None


def test_watch_too_old_gives_410(reg):
    _, rv = reg.list(CM)
    for i in range(60):  # more than watch_history=50
        reg.create(CM, "default", {"metadata": {"name": f"c{i}"}})
    with pytest.raises(StatusError) as e:
        reg.watch(CM, resource_version=rv)
    assert (e.value.code, e.value.reason) == (410, "Expired")
    reg.watch(CM, resource_version=str(reg.resource_version)).stop()  # current RV is fine
    reg.compact()
    with pytest.raises(StatusError):
        reg.watch(CM, resource_version=str(reg.resource_version - 1))


def test_slow_watcher_is_dropped_not_blocking(reg):
    reg.watch_capacity = 5
    w = reg.watch(CM, "default", resource_version=str(reg.resource_version))
    for i in range(10):
        reg.create(CM, "default", {"metadata": {"name": f"c{i}"}})
    assert w.closed and reg.watch_count() == 0


def test_patch_types(reg):
    reg.create(PODS, "default", pod("p", metadata={"name": "p", "labels": {"a": "1", "b": "2"}}))
    p = reg.patch(PODS, "default", "p", {"metadata": {"labels": {"a": None, "c": "3"}}}, "merge")
    assert p["metadata"]["labels"] == {"b": "2", "c": "3"}
    p = reg.patch(
        PODS, "default", "p", [{"op": "add", "path": "/metadata/labels/d", "value": "4"}], "json"
    )
    assert p["metadata"]["labels"]["d"] == "4"
    with pytest.raises(StatusError) as e:
        reg.patch(
            PODS, "default", "p", [{"op": "test", "path": "/metadata/name", "value": "x"}], "json"
        )
    assert e.value.code == 422
    with pytest.raises(StatusError) as e:
        reg.patch(PODS, "default", "p", [{"op": "bogus"}], "json")
    # kube-apiserver checks an operation as it applies it: an unknown one fails there, a 422
    assert e.value.code == 422
    spec = {
        "spec": {
            "$setElementOrder/containers": [{"name": "main"}, {"name": "side"}],
            "containers": [
                {
                    "name": "main",
                    "env": [{"name": "A", "value": "1"}],
                    "ports": [{"containerPort": 80}],
                },
                {"name": "side", "image": "sidecar"},
            ],
        }
    }
    p = reg.patch(PODS, "default", "p", spec, "strategic")
    main = p["spec"]["containers"][0]
    assert [c["name"] for c in p["spec"]["containers"]] == ["main", "side"] and main[
        "image"
    ] == "busybox"
    assert "$setElementOrder/containers" not in p["spec"]
    p = reg.patch(
        PODS,
        "default",
        "p",
        {
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "env": [{"name": "B", "value": "2"}],
                        "ports": [{"containerPort": 81}],
                    }
                ]
            }
        },
        "strategic",
    )
    main = p["spec"]["containers"][0]
    assert [e["name"] for e in main["env"]] == ["A", "B"] and len(main["ports"]) == 2
    p = reg.patch(
        PODS,
        "default",
        "p",
        {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}},
        "strategic",
    )
    assert [c["name"] for c in p["spec"]["containers"]] == ["main"]
    with pytest.raises(StatusError) as e:
        reg.patch(PODS, "default", "p", {"metadata": {"resourceVersion": "1"}, "spec": {}}, "merge")
    assert e.value.reason == "Conflict"
    with pytest.raises(StatusError) as e:
        reg.patch(PODS, "default", "nope", {}, "merge")
    assert e.value.code == 404
    with pytest.raises(StatusError) as e:
        reg.patch(CM, "default", "x", {"data": {}}, "apply")
    assert e.value.code == 422  # no fieldManager: an invalid PatchOptions, as kube-apiserver says
    cm = reg.patch(CM, "default", "x", {"data": {"a": "1"}}, "apply", field_manager="me")
    assert cm["data"] == {"a": "1"}
    cm = reg.patch(CM, "default", "x", {"data": {"b": "2"}}, "apply", field_manager="me")
    assert cm["data"] == {"b": "2"}  # the same manager stopped applying "a"


def test_service_cluster_ip_allocation(reg):
    s = reg.create(SVC, "default", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}})
    assert s["spec"]["clusterIP"].startswith("10.96.") and s["spec"]["ports"][0]["targetPort"] == 80
    h = reg.create(SVC, "default", {"metadata": {"name": "h"}, "spec": {"clusterIP": "None"}})
    assert h["spec"]["clusterIP"] == "None"
    s2 = reg.create(SVC, "default", {"metadata": {"name": "s2"}, "spec": {}})
    assert s2["spec"]["clusterIP"] != s["spec"]["clusterIP"]
    s = reg.patch(
        SVC,
        "default",
        "s",
        {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 90, "name": "metrics"}]}},
        "strategic",
    )
    assert [p["port"] for p in s["spec"]["ports"]] == [80, 90] and s["spec"]["ports"][0][
        "name"
    ] == "http"


def test_finalizers_hold_deletion(reg):
    reg.create(CM, "default", {"metadata": {"name": "f", "finalizers": ["example.com/x"]}})
    w = reg.watch(CM, "default", resource_version=str(reg.resource_version))
    obj = reg.delete(CM, "default", "f")
    assert obj["metadata"]["deletionTimestamp"] and w.get(1)[0] == "MODIFIED"
    assert reg.get(CM, "default", "f")
    with pytest.raises(StatusError) as e:
        reg.patch(
            CM, "default", "f", {"metadata": {"finalizers": ["example.com/x", "y/z"]}}, "merge"
        )
    assert e.value.code == 422
    reg.patch(CM, "default", "f", {"metadata": {"finalizers": None}}, "merge")
    assert w.get(1)[0] == "DELETED"
    with pytest.raises(StatusError):
        reg.get(CM, "default", "f")


def test_delete_preconditions_and_dry_run(reg):
    obj = reg.create(CM, "default", {"metadata": {"name": "a"}})
    with pytest.raises(StatusError) as e:
        reg.delete(CM, "default", "a", preconditions={"uid": "other"})
    assert e.value.reason == "Conflict"
    rv = reg.resource_version
    reg.delete(CM, "default", "a", dry_run=True)
    assert reg.resource_version == rv and reg.get(CM, "default", "a")
    assert (
        reg.create(CM, "default", {"metadata": {"name": "b"}}, dry_run=True)["metadata"]["name"]
        == "b"
    )
    with pytest.raises(StatusError):
        reg.get(CM, "default", "b")
    reg.delete(CM, "default", "a", preconditions={"uid": obj["metadata"]["uid"]})
    with pytest.raises(StatusError) as e:
        reg.delete(CM, "default", "a")
    assert e.value.code == 404


def test_graceful_pod_deletion_on_existing_node(reg):
    reg.create(NODES, None, {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "2"}}})
    assert reg.get(NODES, None, "n1")["status"]["capacity"] == {"cpu": "2"}
    reg.create(PODS, "default", pod("p"))
    reg.bind_pod("default", "p", "n1")
    with pytest.raises(StatusError) as e:
        reg.bind_pod("default", "p", "n1")
    assert e.value.code == 409
    p = reg.delete(PODS, "default", "p")
    assert p["metadata"]["deletionGracePeriodSeconds"] == 30 and p["metadata"]["deletionTimestamp"]
    assert reg.get(PODS, "default", "p")["spec"]["nodeName"] == "n1"
    p = reg.delete(PODS, "default", "p", grace_period_seconds=5)
    assert p["metadata"]["deletionGracePeriodSeconds"] == 5
    reg.delete(PODS, "default", "p", grace_period_seconds=0)
    with pytest.raises(StatusError):
        reg.get(PODS, "default", "p")
    reg.create(
        PODS,
        "default",
        pod("q", spec={"nodeName": "ghost", "containers": [{"name": "c", "image": "i"}]}),
    )
    reg.delete(PODS, "default", "q")
    with pytest.raises(StatusError):
        reg.get(PODS, "default", "q")


def _owned(name: str, owner: dict, block: bool = False) -> dict:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return {"metadata": {"name": name, "ownerReferences": [ref]}}


def test_gc_background_cascades(reg):
    owner = reg.create(CM, "default", {"metadata": {"name": "owner"}})
    child = reg.create(CM, "default", _owned("child", owner))
    reg.create(CM, "default", _owned("grandchild", child))
    reg.delete(CM, "default", "owner")
    assert reg.gc.wait_idle()
    assert [c["metadata"]["name"] for c in reg.list(CM, "default")[0]] == []


def test_gc_keeps_dependent_with_living_owner(reg):
    a = reg.create(CM, "default", {"metadata": {"name": "a"}})
    b = reg.create(CM, "default", {"metadata": {"name": "b"}})
    body = _owned("child", a)
    body["metadata"]["ownerReferences"] += _owned("x", b)["metadata"]["ownerReferences"]
    reg.create(CM, "default", body)
    reg.delete(CM, "default", "a")
    assert reg.gc.wait_idle()
    refs = reg.get(CM, "default", "child")["metadata"]["ownerReferences"]
    assert [r["name"] for r in refs] == ["b"]


def test_gc_dangling_owner_reference_deletes_dependent(reg):
    reg.create(
        CM,
        "default",
        {
            "metadata": {
                "name": "c",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "missing"}
                ],
            }
        },
    )
    assert reg.gc.wait_idle()
    assert reg.list(CM, "default")[0] == []


def test_gc_foreground(reg):
    owner = reg.create(CM, "default", {"metadata": {"name": "owner"}})
    reg.create(CM, "default", _owned("child", owner, block=True) | {})
    reg.patch(CM, "default", "child", {"metadata": {"finalizers": ["hold/it"]}}, "merge")
    w = reg.watch(
        CM,
        "default",
        resource_version=str(reg.resource_version),
        field_selector="metadata.name=owner",
    )
    o = reg.delete(CM, "default", "owner", propagation_policy="Foreground")
    assert (
        "foregroundDeletion" in o["metadata"]["finalizers"] and o["metadata"]["deletionTimestamp"]
    )
    assert reg.gc.wait_idle()
    assert reg.get(CM, "default", "owner")  # blocked by the child's finalizer
    reg.patch(CM, "default", "child", {"metadata": {"finalizers": None}}, "merge")
    assert reg.gc.wait_idle()
    types = []
    while (ev := w.get(0.5)) is not None:
        types.append(ev[0])
    assert types[-1] == "DELETED"
    assert reg.list(CM, "default")[0] == []


def test_gc_orphan(reg):
    owner = reg.create(CM, "default", {"metadata": {"name": "owner"}})
    reg.create(CM, "default", _owned("child", owner))
    reg.delete(CM, "default", "owner", propagation_policy="Orphan")
    assert reg.gc.wait_idle()
    assert [c["metadata"]["name"] for c in reg.list(CM, "default")[0]] == ["child"]
    assert "ownerReferences" not in reg.get(CM, "default", "child")["metadata"]


def test_namespace_deletion_empties_it_and_forbids_new_content(reg):
    reg.create(NS, None, {"metadata": {"name": "tmp"}})
    reg.create(CM, "tmp", {"metadata": {"name": "a", "finalizers": ["x/y"]}})
    ns = reg.delete(NS, None, "tmp")
    assert ns["status"]["phase"] == "Terminating"
    assert reg.gc.wait_idle()
    with pytest.raises(StatusError) as e:
        reg.create(CM, "tmp", {"metadata": {"name": "b"}})
    assert (e.value.code, e.value.reason) == (403, "Forbidden")
    reg.patch(CM, "tmp", "a", {"metadata": {"finalizers": []}}, "merge")
    assert reg.gc.wait_idle()
    with pytest.raises(StatusError):
        reg.get(NS, None, "tmp")


def test_delete_collection(reg):
    for i in range(3):
        reg.create(
            CM, "default", {"metadata": {"name": f"c{i}", "labels": {"g": "1" if i else "2"}}}
        )
    deleted = reg.delete_collection(CM, "default", label_selector="g=1")
    assert len(deleted) == 2 and [c["metadata"]["name"] for c in reg.list(CM, "default")[0]] == [
        "c0"
    ]


def test_micro_time_normalised_for_leases(reg):
    lease = reg.create(
        ("coordination.k8s.io", "v1", "leases"),
        "default",
        {
            "metadata": {"name": "l"},
            "spec": {"holderIdentity": "me", "renewTime": "2026-11-21T20:58:40.923013+00:00"},
        },
    )
    assert lease["spec"]["renewTime"] == "2026-11-21T20:58:40.923013Z"


@pytest.mark.parametrize(
    "metadata",
    [
        {"labels": {"bad key": "v"}},
        {"labels": {"k": "-bad-"}},
        {"labels": {"k": "x" * 64}},
        {"annotations": {"/nope": "v"}},
        {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p"}]},
        {"finalizers": ["bad finalizer"]},
    ],
)
def test_metadata_validation(reg, metadata):
    with pytest.raises(StatusError) as e:
        reg.create(CM, "default", {"metadata": {"name": "m", **metadata}})
    assert e.value.code == 422 and e.value.status["details"]["causes"][0]["field"].startswith(
        "metadata."
    )


def test_valid_metadata_is_accepted(reg):
    m = {
        "labels": {"example.com/app": "web", "empty": ""},
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        "finalizers": ["example.com/x", "foregroundDeletion"],
    }
    assert (
        reg.create(CM, "default", {"metadata": {"name": "m", **m}})["metadata"]["labels"]["empty"]
        == ""
    )


def test_long_replay_does_not_count_against_capacity(reg):
    reg.watch_capacity = 5
    _, rv = reg.list(CM)
    for i in range(20):
        reg.create(CM, "default", {"metadata": {"name": f"c{i}"}})
    w = reg.watch(CM, "default", resource_version=rv)
    got = [w.get(1) for _ in range(20)]
    assert not w.closed and [o["metadata"]["name"] for _, o in got] == [f"c{i}" for i in range(20)]


def test_server_side_apply_removes_fields_the_manager_stopped_applying(reg):
    first = {
        "metadata": {"name": "a", "labels": {"x": "1", "y": "2"}},
        "data": {"k": "v", "old": "o"},
    }
    cm = reg.patch(CM, "default", "a", first, "apply", field_manager="me")
    entry = cm["metadata"]["managedFields"][0]
    assert (entry["manager"], entry["operation"], entry["fieldsType"]) == (
        "me",
        "Apply",
        "FieldsV1",
    )
    assert entry["fieldsV1"]["f:data"] == {"f:k": {}, "f:old": {}}
    reg.patch(CM, "default", "a", {"metadata": {"labels": {"z": "3"}}}, "merge")  # another writer
    second = {"metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v2"}}
    before = reg.get(CM, "default", "a")
    cm = reg.patch(CM, "default", "a", second, "apply", field_manager="me")
    assert cm["metadata"]["labels"] == {"x": "1", "z": "3"} and cm["data"] == {"k": "v2"}
    assert before["metadata"]["labels"] == {"x": "1", "y": "2", "z": "3"}  # stored state untouched
    cm = reg.patch(CM, "default", "a", {"data": {"other": "1"}}, "apply", field_manager="you")
    assert cm["data"] == {"k": "v2", "other": "1"}
    assert sorted(e["manager"] for e in cm["metadata"]["managedFields"]) == ["me", "you"]
