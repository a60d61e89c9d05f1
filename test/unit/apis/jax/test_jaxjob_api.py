"""JAXJob types, defaults and validation: the JSON round-trips; v1.9's defaults
(jax_defaults.go); what v1.9's webhook refuses (jaxjob_webhook_test.go's table), for clusters
that do not enforce the CRD's rules."""

import copy

import pytest

from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9
from tf_operator.apis.jax.v1.defaults import set_defaults_jaxjob
from tf_operator.apis.jax.v1.types import JAXJob
from tf_operator.apis.jax.validation.validation import ValidationError, validate_v1_jaxjob

IMAGE = "docker.io/kubeflow/jaxjob-simple:latest"


def replica(name="jax", image=IMAGE, **extra) -> dict:
    return {"template": {"spec": {"containers": [{"name": name, "image": image}]}}, **extra}


def raw(name="test", **spec) -> dict:
    spec.setdefault("jaxReplicaSpecs", {"Worker": replica(replicas=2)})
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "JAXJob",
        "metadata": {"name": name, "namespace": "default", "uid": "u"},
        "spec": spec,
    }


def test_everything_written_round_trips_unknown_fields_included():
    body = raw(runPolicy={"suspend": True, "future": 1}, newField=[1])
    body["status"] = {"conditions": None, "replicaStatuses": None}
    assert JAXJob.from_dict(copy.deepcopy(body)).to_dict() == body


def test_v1_9s_defaults():
    job = JAXJob.from_dict(raw(jaxReplicaSpecs={"Worker": replica()}), DEFAULTS_V1_9)
    set_defaults_jaxjob(job)
    worker = job.spec.jax_replica_specs["Worker"]
    assert (worker.replicas, worker.restart_policy) == (1, "Never")
    assert worker.containers()[0]["ports"] == [{"name": "jaxjob-port", "containerPort": 6666}]
    assert job.run_policy.clean_pod_policy == "None"
    # a port named so is kept; the default goes on the jax container, not the first one
    sidecar = {"name": "side", "image": "s"}
    named = replica(replicas=2)
    named["template"]["spec"]["containers"].insert(0, sidecar)
    named["template"]["spec"]["containers"][1]["ports"] = [
        {"name": "jaxjob-port", "containerPort": 1}
    ]
    job = JAXJob.from_dict(raw(jaxReplicaSpecs={"Worker": named, "Extra": None}))
    set_defaults_jaxjob(job)
    containers = job.spec.jax_replica_specs["Worker"].containers()
    assert "ports" not in containers[0]
    assert containers[1]["ports"] == [{"name": "jaxjob-port", "containerPort": 1}]


def test_a_valid_job_passes():
    validate_v1_jaxjob(JAXJob.from_dict(raw()))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (raw("0-test"), "JAXJob name '0-test' is not valid"),
        (
            raw(jaxReplicaSpecs={"Worker": {"template": {"spec": {"containers": []}}}}),
            "spec.jaxReplicaSpecs[Worker].template.spec.containers: Required value: must be "
            "specified",
        ),
        (
            raw(jaxReplicaSpecs={"Worker": replica(image="")}),
            "spec.jaxReplicaSpecs[Worker].template.spec.containers[0].image: Required value",
        ),
        (
            raw(jaxReplicaSpecs={"Worker": replica(name="")}),
            "must have at least one container with name jax",
        ),
        (raw(jaxReplicaSpecs=None), "spec.jaxReplicaSpecs: Required value: must be required"),
        (
            raw(jaxReplicaSpecs={"Worker": replica(), "Master": replica()}),
            'spec.jaxReplicaSpecs[Master]: Unsupported value: "Master": supported values: "Worker"',
        ),
        (raw(jaxReplicaSpecs={}), "at least one replica type is required"),
    ],
)
def test_what_v1_9s_webhook_refuses_is_refused(body, message):
    with pytest.raises(ValidationError) as info:
        validate_v1_jaxjob(JAXJob.from_dict(body))
    assert message in str(info.value)
