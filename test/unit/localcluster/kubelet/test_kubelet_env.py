"""Container environment: $(VAR) expansion, fieldRef, ConfigMap/Secret references, argv."""

import base64

import pytest

from localcluster.client.inprocess import InProcessClient
from localcluster.controlplane.emulated import Registry
from localcluster.kubelet.env import (
    ContainerConfigError,
    container_argv,
    container_env,
    expand,
)
from localcluster.kubelet.podstatus import PodRecord


@pytest.fixture
def registry():
    r = Registry()
    r.create(("", "v1", "namespaces"), None, {"metadata": {"name": "ns1"}})
    yield r
    r.stop()


def record(pod):
    return PodRecord("ns1", "pod-a", "uid-1", pod, "127.1.2.3", "127.0.0.1", "t")


def test_expand():
    env = {"A": "x", "B": "y"}
    assert expand("$(A)-$(B)-$(C)-$$(A)", env) == "x-y-$(C)-$(A)"


def test_env_sources(registry):
    registry.create(
        ("", "v1", "configmaps"), "ns1", {"metadata": {"name": "cm"}, "data": {"k": "from-cm"}}
    )
    secret = base64.b64encode(b"s3cret").decode()
    registry.create(
        ("", "v1", "secrets"), "ns1", {"metadata": {"name": "sec"}, "data": {"pw": secret}}
    )
    pod = {"metadata": {"name": "pod-a", "labels": {"app": "x"}}, "spec": {"nodeName": "n"}}
    spec = {
        "name": "c",
        "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
        "env": [
            {"name": "TF_CONFIG", "value": '{"task": 1}'},
            {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {"name": "PW", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "pw"}}},
            {"name": "ADDR", "value": "$(IP):2222"},
        ],
        "command": ["echo", "$(NAME)"],
        "args": ["$(ADDR)"],
    }
    env = container_env(InProcessClient(registry), record(pod), spec, {"PATH": "/bin"})
    assert env["CM_k"] == "from-cm"
    assert env["TF_CONFIG"] == '{"task": 1}'
    assert (env["NAME"], env["NS"], env["IP"], env["APP"], env["PW"]) == (
        "pod-a",
        "ns1",
        "127.1.2.3",
        "x",
        "s3cret",
    )
    assert env["ADDR"] == "127.1.2.3:2222"
    assert container_argv(spec, env) == ["echo", "pod-a", "127.1.2.3:2222"]


def test_missing_config_map_key_is_a_config_error_unless_optional(registry):
    pod = {"metadata": {"name": "pod-a"}, "spec": {}}
    ref = {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "none", "key": "k"}}}
    with pytest.raises(ContainerConfigError):
        container_env(InProcessClient(registry), record(pod), {"name": "c", "env": [ref]}, {})
    ref["valueFrom"]["configMapKeyRef"]["optional"] = True
    assert "X" not in container_env(
        InProcessClient(registry), record(pod), {"name": "c", "env": [ref]}, {}
    )


def test_no_command_means_no_argv():
    assert container_argv({"name": "c", "args": ["x"]}, {}) == []
