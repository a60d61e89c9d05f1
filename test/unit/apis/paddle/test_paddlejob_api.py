"""PaddleJob types, defaults and validation: the JSON round-trips; v1.9's defaults
(paddlepaddle_defautls.go, the elastic policy's bounds); what v1.9's webhook refuses
(paddlepaddle_webhook_test.go's table), for clusters that do not enforce the CRD's rules."""

import copy

import pytest

from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9
from tf_operator.apis.paddle.v1.defaults import set_defaults_paddlejob
from tf_operator.apis.paddle.v1.types import PaddleJob
from tf_operator.apis.paddle.validation.validation import ValidationError, validate_v1_paddlejob

IMAGE = "registry.baidubce.com/paddlepaddle/paddle:2.4.0rc0-cpu"


def replica(name="paddle", image=IMAGE, **extra) -> dict:
    return {"template": {"spec": {"containers": [{"name": name, "image": image}]}}, **extra}


def raw(name="test", **spec) -> dict:
    spec.setdefault("paddleReplicaSpecs", {"Worker": replica(replicas=2)})
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PaddleJob",
        "metadata": {"name": name, "namespace": "default", "uid": "u"},
        "spec": spec,
    }


def test_everything_written_round_trips_unknown_fields_included():
    body = raw(
        runPolicy={"cleanPodPolicy": "All"},
        elasticPolicy={"minReplicas": 1, "maxRestarts": 3, "metrics": [{"type": "x"}], "new": 1},
    )
    body["status"] = {"conditions": None, "replicaStatuses": None}
    assert PaddleJob.from_dict(copy.deepcopy(body)).to_dict() == body


def defaulted(**spec) -> PaddleJob:
    job = PaddleJob.from_dict(raw(**spec), DEFAULTS_V1_9)
    set_defaults_paddlejob(job)
    return job


def test_v1_9s_replica_defaults():
    job = defaulted(paddleReplicaSpecs={"Master": replica(), "Worker": replica(replicas=3)})
    for rtype, replicas in (("Master", 1), ("Worker", 3)):
        spec = job.spec.paddle_replica_specs[rtype]
        assert (spec.replicas, spec.restart_policy) == (replicas, "OnFailure")
        assert spec.containers()[0]["ports"] == [{"name": "master", "containerPort": 36543}]
    assert job.run_policy.clean_pod_policy == "None"


@pytest.mark.parametrize(
    ("written", "bounds"),
    [
        ({}, (2, 2)),  # the Worker count, both
        ({"minReplicas": 1}, (1, 1)),
        ({"maxReplicas": 4}, (4, 4)),
        ({"minReplicas": 1, "maxReplicas": 4}, (1, 4)),
    ],
)
def test_v1_9s_elastic_policy_defaults(written, bounds):
    elastic = defaulted(elasticPolicy=written).spec.elastic_policy
    assert elastic is not None
    assert (elastic.min_replicas, elastic.max_replicas) == bounds


def test_a_valid_job_passes():
    validate_v1_paddlejob(PaddleJob.from_dict(raw()))
    validate_v1_paddlejob(
        PaddleJob.from_dict(
            raw(paddleReplicaSpecs={"Master": replica(replicas=2), "Worker": replica()})
        )
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (raw("__test"), "PaddleJob name '__test' is not valid"),
        (
            raw(paddleReplicaSpecs={"Worker": {"template": {"spec": {"containers": []}}}}),
            "spec.paddleReplicaSpecs[Worker].template.spec.containers: Required value: must be "
            "specified",
        ),
        (
            raw(paddleReplicaSpecs={"Worker": replica(image="")}),
            "spec.paddleReplicaSpecs[Worker].template.spec.containers[0].image: Required value",
        ),
        (
            raw(paddleReplicaSpecs={"Worker": replica(name="")}),
            "must have at least one container with name paddle",
        ),
        (raw(paddleReplicaSpecs=None), "spec.paddleReplicaSpecs: Required value: must be required"),
        (
            raw(paddleReplicaSpecs={"Chief": replica()}),
            'spec.paddleReplicaSpecs[Chief]: Unsupported value: "Chief"',
        ),
    ],
)
def test_what_v1_9s_webhook_refuses_is_refused(body, message):
    with pytest.raises(ValidationError) as info:
        validate_v1_paddlejob(PaddleJob.from_dict(body))
    assert message in str(info.value)
