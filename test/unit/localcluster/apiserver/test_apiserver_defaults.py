"""Server-side defaulting of pods as a real API server does it (container ports get a protocol)."""

from __future__ import annotations

import pytest

from localcluster.controlplane.emulated import Registry
from localcluster.controlplane.emulated.admission.defaults import pod_defaults

PODS = ("", "v1", "pods")


@pytest.fixture
def reg():
    r = Registry(watch_history=50)
    yield r
    r.stop()


def test_created_pod_container_ports_default_to_tcp(reg):
    # The body tf-operator (Go and Python) sends: a named port with no protocol.
    body = {
        "metadata": {"name": "job-worker-0"},
        "spec": {
            "containers": [
                {
                    "name": "tensorflow",
                    "image": "tf:1",
                    "ports": [{"name": "tfjob-port", "containerPort": 2222}],
                }
            ]
        },
    }
    created = reg.create(PODS, "default", body)
    assert created["spec"]["containers"][0]["ports"] == [
        {"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}
    ]


def test_explicit_protocol_kept_and_init_containers_defaulted():
    pod = {
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {"name": "a", "image": "x:1", "ports": [{"containerPort": 53, "protocol": "UDP"}]}
            ],
            "initContainers": [{"name": "i", "image": "x:1", "ports": [{"containerPort": 80}]}],
        },
    }
    pod_defaults(pod, None)
    assert pod["spec"]["containers"][0]["ports"][0]["protocol"] == "UDP"
    assert pod["spec"]["initContainers"][0]["ports"][0]["protocol"] == "TCP"
