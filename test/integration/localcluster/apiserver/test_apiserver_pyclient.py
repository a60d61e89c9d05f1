"""The official ``kubernetes`` Python client (37.x) against the emulator."""

from __future__ import annotations

import pytest
from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.integration


@pytest.fixture
def api_client(kubeconfig_path):
    c = config.new_client_from_config(config_file=str(kubeconfig_path))
    yield c
    c.close()


def _pod(name: str, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": "py"}},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }


def test_core_crud_and_conflict(api_client):
    core = client.CoreV1Api(api_client)
    created = core.create_namespaced_pod("default", _pod("py1"))
    assert created.metadata.uid and created.status.phase == "Pending"
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod("default", _pod("py1"))
    assert e.value.status == 409 and '"AlreadyExists"' in e.value.body
    stale = core.read_namespaced_pod("py1", "default")
    core.patch_namespaced_pod("py1", "default", {"metadata": {"labels": {"x": "1"}}})  # strategic
    core.patch_namespaced_pod(
        "py1", "default", [{"op": "add", "path": "/metadata/labels/y", "value": "2"}]
    )
    stale.metadata.labels = {"z": "3"}
    with pytest.raises(ApiException) as e:
        core.replace_namespaced_pod("py1", "default", stale)
    assert e.value.status == 409 and '"Conflict"' in e.value.body
    fresh = core.read_namespaced_pod("py1", "default")
    assert fresh.metadata.labels == {"app": "py", "x": "1", "y": "2"}
    fresh.metadata.labels["z"] = "3"
    assert core.replace_namespaced_pod("py1", "default", fresh).metadata.labels["z"] == "3"
    status = core.read_namespaced_pod_status("py1", "default")
    status.status.phase = "Running"
    core.replace_namespaced_pod_status("py1", "default", status)
    pods = core.list_namespaced_pod(
        "default", field_selector="status.phase=Running", label_selector="app=py"
    )
    assert [p.metadata.name for p in pods.items] == ["py1"]
    core.delete_namespaced_pod(
        "py1", "default", propagation_policy="Foreground", grace_period_seconds=0
    )
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod("py1", "default")
    assert e.value.status == 404


def test_apply_patch_and_merge_patch(api_client):
    core = client.CoreV1Api(api_client)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}}
    core.patch_namespaced_config_map(
        "cm",
        "default",
        body,
        field_manager="pytest",
        force=True,
        _content_type="application/apply-patch+yaml",
    )
    core.patch_namespaced_config_map(
        "cm", "default", {"data": {"b": "2"}}, _content_type="application/merge-patch+json"
    )
    assert core.read_namespaced_config_map("cm", "default").data == {"a": "1", "b": "2"}


def test_watch_stream_and_410(api_client):
    core = client.CoreV1Api(api_client)
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", {"metadata": {"name": "w1"}})
    core.patch_namespaced_config_map("w1", "default", {"data": {"k": "v"}})
    w = watch.Watch()
    events = []
    for ev in w.stream(
        core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=2
    ):
        events.append((ev["type"], ev["object"].metadata.name))
        if len(events) == 2:
            w.stop()
    assert events == [("ADDED", "w1"), ("MODIFIED", "w1")]


def test_watch_expired_resource_version_raises_410(api_client, apiserver):
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map("default", {"metadata": {"name": "x"}})
    apiserver.registry.compact()
    core.create_namespaced_config_map("default", {"metadata": {"name": "y"}})
    with pytest.raises(ApiException) as e:
        for _ in watch.Watch().stream(
            core.list_namespaced_config_map, "default", resource_version="1", timeout_seconds=2
        ):
            pass
    assert e.value.status == 410


def test_bookmarks_only_when_asked(api_client):
    core = client.CoreV1Api(api_client)
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    kinds = [
        ev["type"]
        for ev in watch.Watch().stream(
            core.list_namespaced_config_map,
            "default",
            resource_version=rv,
            timeout_seconds=2,
            allow_watch_bookmarks=True,
        )
    ]
    assert "BOOKMARK" in kinds
    kinds = [
        ev["type"]
        for ev in watch.Watch().stream(
            core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=2
        )
    ]
    assert kinds == []


def test_custom_objects(api_client):
    ext = client.ApiextensionsV1Api(api_client)
    ext.create_custom_resource_definition(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [
                    {
                        "name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                    }
                ],
            },
        }
    )  # fmt: skip
    co = client.CustomObjectsApi(api_client)
    args = ("example.com", "v1", "default", "widgets")
    w = co.create_namespaced_custom_object(
        *args,
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w1"},
            "spec": {"n": 1},
            "status": {"dropped": True},
        },
    )
    assert "status" not in w
    co.patch_namespaced_custom_object(*args, "w1", {"spec": {"n": 2}})
    co.patch_namespaced_custom_object(
        *args,
        "w1",
        [{"op": "replace", "path": "/spec/n", "value": 3}],
        _content_type="application/json-patch+json",
    )
    co.patch_namespaced_custom_object_status(*args, "w1", {"status": {"phase": "Ok"}})
    got = co.get_namespaced_custom_object(*args, "w1")
    assert (
        got["spec"] == {"n": 3}
        and got["status"] == {"phase": "Ok"}
        and got["metadata"]["generation"] == 3
    )
    assert [
        i["metadata"]["name"]
        for i in co.list_namespaced_custom_object(*args, label_selector="")["items"]
    ] == ["w1"]
    events = [
        ev["type"]
        for ev in watch.Watch().stream(co.list_namespaced_custom_object, *args, timeout_seconds=1)
    ]
    assert events == ["ADDED"]
    co.delete_namespaced_custom_object(*args, "w1")
    assert co.list_cluster_custom_object("example.com", "v1", "widgets")["items"] == []


def test_dynamic_client_discovery(api_client):
    dyn = dynamic.DynamicClient(api_client)
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    assert pods.namespaced
    leases = dyn.resources.get(api_version="coordination.k8s.io/v1", kind="Lease")
    leases.create(
        body={
            "metadata": {"name": "l"},
            "spec": {"holderIdentity": "me", "renewTime": "2026-11-21T20:58:40.923013+00:00"},
        },
        namespace="default",
    )
    assert leases.get(name="l", namespace="default").spec.renewTime == "2026-11-21T20:58:40.923013Z"


ELECTION_SCRIPT = """
import sys
from kubernetes import config
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

config.load_kube_config(config_file=sys.argv[1])
lock = (LeaseLock if sys.argv[2] == "lease" else ConfigMapLock)("py-" + sys.argv[2], "default", "me-1")
cfg = electionconfig.Config(lock, 4, 3, 1, lambda: print("LEADING", flush=True), lambda: None)
leaderelection.LeaderElection(cfg).run()
"""


@pytest.mark.parametrize("lock_kind", ["lease", "configmap"])
def test_leader_election_locks(kubeconfig_path, apiserver, lock_kind):
    """The client's LeaseLock/ConfigMapLock (in a child process: its loop cannot be stopped)."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", ELECTION_SCRIPT, str(kubeconfig_path), lock_kind],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "LEADING"
        if lock_kind == "lease":
            lease = apiserver.registry.get(
                ("coordination.k8s.io", "v1", "leases"), "default", "py-lease"
            )
            assert lease["spec"]["holderIdentity"] == "me-1" and lease["spec"][
                "renewTime"
            ].endswith("Z")
        else:
            cm = apiserver.registry.get(("", "v1", "configmaps"), "default", "py-configmap")
            assert (
                "me-1" in cm["metadata"]["annotations"]["control-plane.alpha.kubernetes.io/leader"]
            )
    finally:
        proc.kill()
        proc.wait()


def test_deleting_a_custom_resource_collects_its_pods_and_services(api_client, apiserver):
    """tf-operator's reliance on GC: pods/services owned by a TFJob go when the TFJob does."""
    from pathlib import Path

    import yaml

    crd = yaml.safe_load((Path(__file__).parents[4] / "manifests/base/crd.yaml").read_text())
    client.ApiextensionsV1Api(api_client).create_custom_resource_definition(crd)
    co = client.CustomObjectsApi(api_client)
    job = co.create_namespaced_custom_object(
        "kubeflow.org", "v1", "default", "tfjobs",
        {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "dist"},
         "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf"}]}}}}}},
    )  # fmt: skip
    ref = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "name": "dist",
        "uid": job["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    core = client.CoreV1Api(api_client)
    for i in range(2):
        core.create_namespaced_pod(
            "default",
            {
                "metadata": {"name": f"dist-worker-{i}", "ownerReferences": [ref]},
                "spec": {"containers": [{"name": "tensorflow", "image": "tf"}]},
            },
        )
        core.create_namespaced_service(
            "default",
            {
                "metadata": {"name": f"dist-worker-{i}", "ownerReferences": [ref]},
                "spec": {"clusterIP": "None", "ports": [{"port": 2222, "targetPort": 0}]},
            },
        )
    rv = core.list_namespaced_pod("default").metadata.resource_version
    co.delete_namespaced_custom_object("kubeflow.org", "v1", "default", "tfjobs", "dist")
    deleted = set()
    for ev in watch.Watch().stream(
        core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=10
    ):
        if ev["type"] == "DELETED":
            deleted.add(ev["object"].metadata.name)
            if len(deleted) == 2:
                break
    assert deleted == {"dist-worker-0", "dist-worker-1"}
    assert apiserver.registry.gc.wait_idle()
    assert core.list_namespaced_service("default").items == []
