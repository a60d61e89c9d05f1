"""Defaulting, ported from v0.5.3's pkg/apis/tensorflow/v1/defaults_test.go."""

import pytest

from tf_operator.apis.tensorflow.v1.defaults import (
    set_defaults_tfjob,
    set_type_names_to_camel_case,
)
from tf_operator.apis.tensorflow.v1.types import TFJob

IMAGE = "test-image:latest"


def _job(worker: dict, clean_pod_policy: str | None = None) -> TFJob:
    spec: dict = {"tfReplicaSpecs": {"Worker": worker}}
    if clean_pod_policy is not None:
        spec["cleanPodPolicy"] = clean_pod_policy
    return TFJob.from_dict({"metadata": {"name": "j"}, "spec": spec})


def _worker(ports=None, replicas=None, restart_policy=None) -> dict:
    container = {"name": "tensorflow", "image": IMAGE}
    if ports is not None:
        container["ports"] = ports
    out: dict = {"template": {"spec": {"containers": [container]}}}
    if replicas is not None:
        out["replicas"] = replicas
    if restart_policy is not None:
        out["restartPolicy"] = restart_policy
    return out


def _expected(clean, restart, port_name, port) -> dict:
    ports = []
    if port_name:
        ports.append({"name": port_name, "containerPort": port})
    if port_name != "tfjob-port":
        ports.append({"name": "tfjob-port", "containerPort": 2222})
    return {
        "cleanPodPolicy": clean,
        "tfReplicaSpecs": {
            "Worker": {
                "replicas": 1,
                "restartPolicy": restart,
                "template": {
                    "spec": {"containers": [{"name": "tensorflow", "image": IMAGE, "ports": ports}]}
                },
            }
        },
    }


DEFAULT_PORT = [{"name": "tfjob-port", "containerPort": 2222}]
CUSTOM_PORT = [{"name": "customPort", "containerPort": 1234}]


@pytest.mark.parametrize(
    "worker, clean, expected",
    [
        pytest.param(
            _worker(DEFAULT_PORT, restart_policy="Always"),
            None,
            _expected("Running", "Always", "tfjob-port", 2222),
            id="set replicas",
        ),
        pytest.param(
            _worker(DEFAULT_PORT),
            None,
            _expected("Running", "Never", "tfjob-port", 2222),
            id="set replicas with default restartpolicy",
        ),
        pytest.param(
            _worker(None, replicas=1, restart_policy="Always"),
            None,
            _expected("Running", "Always", "", 0),
            id="set replicas with default port",
        ),
        pytest.param(
            _worker(CUSTOM_PORT, replicas=1, restart_policy="Always"),
            None,
            _expected("Running", "Always", "customPort", 1234),
            id="set replicas adding default port",
        ),
        pytest.param(
            _worker(CUSTOM_PORT, replicas=1, restart_policy="Always"),
            "All",
            _expected("All", "Always", "customPort", 1234),
            id="set custom cleanpod policy",
        ),
    ],
)
def test_set_defaults(worker, clean, expected):
    job = _job(worker, clean)
    set_defaults_tfjob(job)
    spec = job.spec.to_dict()
    # cleanPodPolicy's default lives in the normalised run policy; the spec keeps what was
    # written (D56)
    assert spec.pop("cleanPodPolicy", None) == clean
    assert job.run_policy.clean_pod_policy == expected.pop("cleanPodPolicy")
    assert spec == expected


def test_set_type_names():
    job = TFJob.from_dict(
        {"spec": {"tfReplicaSpecs": {"WORKER": _worker(DEFAULT_PORT), "ps": _worker()}}}
    )
    set_type_names_to_camel_case(job)
    assert set(job.spec.tf_replica_specs) == {"Worker", "PS"}


def test_port_goes_to_tensorflow_container_not_first():
    job = TFJob.from_dict(
        {
            "spec": {
                "tfReplicaSpecs": {
                    "Worker": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "sidecar", "image": "s"},
                                    {"name": "tensorflow", "image": "t"},
                                ]
                            }
                        }
                    }
                }
            }
        }
    )
    set_defaults_tfjob(job)
    containers = job.spec.tf_replica_specs["Worker"].containers()
    assert "ports" not in containers[0]
    assert containers[1]["ports"] == DEFAULT_PORT
