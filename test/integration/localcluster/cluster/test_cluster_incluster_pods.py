"""What a process pod sees of the cluster, as on a real node: its service-account token, CA
and namespace at /var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_* pointing
at the API server over TLS (the Python client's unmodified in-cluster config works, under
RBAC), volumes mounted at their paths, and images mapped to local commands."""

import os
import sys

import pytest

from localcluster.cluster import LocalCluster
from localcluster.kubelet.dns import probe_mount_namespace
from localcluster.kubelet.images import LocalImage
from localcluster.testing import wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not probe_mount_namespace(), reason="needs mount namespaces (root)"),
]

PODS = ("", "v1", "pods")
RBAC = "rbac.authorization.k8s.io"

IN_CLUSTER = r"""
import os
from kubernetes import client, config
base = "/var/run/secrets/kubernetes.io/serviceaccount"
print("files", sorted(os.listdir(base)), open(base + "/namespace").read())
config.load_incluster_config()
for ns in ("default", "kube-system"):
    try:
        client.CoreV1Api().list_namespaced_config_map(ns)
        print("list", ns, 200)
    except client.ApiException as err:
        print("list", ns, err.status)
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tool = tmp_path_factory.mktemp("image") / "hello"
    tool.write_text('#!/bin/sh\necho hello from the image "$@"\n')
    tool.chmod(0o755)
    images = {"example.com/hello": LocalImage(entrypoint=(str(tool),), cmd=("world",))}
    with LocalCluster(kubelet="process", images=images) as c:
        yield c


def run_pod(cluster, name, spec, timeout=60):
    spec = {"restartPolicy": "Never", **spec}
    cluster.registry.create(PODS, "default", {"metadata": {"name": name}, "spec": spec})
    wait_for(
        lambda: (
            cluster.registry.get(PODS, "default", name)["status"].get("phase")
            in ("Succeeded", "Failed")
        ),
        timeout,
    )
    pod = cluster.registry.get(PODS, "default", name)
    return pod, b"".join(cluster._logs("default", name, None)).decode()


def test_in_cluster_config_works_under_rbac(cluster):
    reg = cluster.registry
    reg.create((RBAC, "v1", "roles"), "default", {"metadata": {"name": "cm"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]})  # fmt: skip
    reg.create((RBAC, "v1", "rolebindings"), "default", {"metadata": {"name": "cm"},
               "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "cm"},
               "subjects": [{"kind": "ServiceAccount", "name": "default"}]})  # fmt: skip
    container = {"name": "c", "image": "python", "command": [sys.executable, "-c", IN_CLUSTER]}
    pod, logs = run_pod(cluster, "incluster", {"containers": [container]})
    assert pod["status"]["phase"] == "Succeeded", logs
    assert "files ['ca.crt', 'namespace', 'token'] default" in logs
    assert "list default 200" in logs and "list kube-system 403" in logs
    token_dir = "/var/run/secrets/kubernetes.io/serviceaccount"
    assert not os.path.exists(token_dir) or os.listdir(token_dir) == []  # host untouched


def test_environment_points_at_the_secure_listener(cluster):
    command = [
        "sh",
        "-c",
        "echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT $KUBERNETES_PORT",
    ]
    pod, logs = run_pod(
        cluster, "env", {"containers": [{"name": "c", "image": "x", "command": command}]}
    )
    port = cluster.server.secure_port
    assert logs.strip() == f"127.0.0.1:{port} tcp://127.0.0.1:{port}"


def test_config_map_volume_and_automount_off(cluster, tmp_path):
    cluster.registry.create(
        ("", "v1", "configmaps"), "default", {"metadata": {"name": "cfg"}, "data": {"a.txt": "A"}}
    )
    target = tmp_path / "mnt"
    target.mkdir()
    spec = {
        "automountServiceAccountToken": False,
        "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}],
        "containers": [{"name": "c", "image": "x",
                        "command": ["sh", "-c", f"cat {target}/a.txt; echo; ls /var/run/secrets/kubernetes.io/serviceaccount 2>/dev/null | wc -l"],
                        "volumeMounts": [{"name": "cfg", "mountPath": str(target)}]}],
    }  # fmt: skip
    pod, logs = run_pod(cluster, "cfg", spec)
    assert logs.split() == ["A", "0"]
    assert list(target.iterdir()) == []


def test_mount_targets_missing_on_the_host_are_made_for_the_pod_only(cluster, tmp_path):
    """Issue 27, item 9: process pods left /var/run/secrets/kubernetes.io/serviceaccount on the
    host, after which other programs believed they ran in a pod. The pod sees its token and a
    volume at paths the host does not have; afterwards the host still does not have them."""
    token_dir = "/var/run/secrets/kubernetes.io/serviceaccount"
    token_dir_before = os.path.exists(token_dir)
    unique = f"/var/lib/localcluster-test-{os.getpid()}-{id(tmp_path)}"
    cluster.registry.create(
        ("", "v1", "configmaps"), "default", {"metadata": {"name": "deep"}, "data": {"b": "B"}}
    )
    show = f"cat {unique}/deep/cfg/b; echo; ls {token_dir}; cat /etc/hostname >/dev/null"
    spec = {
        "volumes": [{"name": "deep", "configMap": {"name": "deep"}}],
        "containers": [{"name": "c", "image": "x", "command": ["sh", "-c", show],
                        "volumeMounts": [{"name": "deep", "mountPath": f"{unique}/deep/cfg"}]}],
    }  # fmt: skip
    pod, logs = run_pod(cluster, "missing-targets", spec)
    assert pod["status"]["phase"] == "Succeeded", logs
    assert logs.split() == ["B", "ca.crt", "namespace", "token"]
    assert not os.path.exists(unique)
    assert os.path.exists(token_dir) == token_dir_before
    if token_dir_before:
        assert os.listdir(token_dir) == []


def test_mapped_image_runs_its_entrypoint(cluster):
    spec = {"containers": [{"name": "c", "image": "example.com/hello:1.0"}]}
    pod, logs = run_pod(cluster, "hello", spec)
    assert logs.strip() == "hello from the image world"
    spec = {"containers": [{"name": "c", "image": "example.com/hello", "args": ["you"]}]}
    pod, logs = run_pod(cluster, "hello2", spec)
    assert logs.strip() == "hello from the image you"
