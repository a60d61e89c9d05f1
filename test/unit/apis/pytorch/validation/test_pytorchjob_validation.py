"""The operator refuses what v1.9's PyTorchJob webhook refuses (its test table), for clusters
that do not enforce the CRD's rules, and what the CRD bounds beyond it (D81)."""

import pytest

from tf_operator.apis.pytorch.v1.types import PyTorchJob
from tf_operator.apis.pytorch.validation.validation import ValidationError, validate_v1_pytorchjob

IMAGE = "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"


def replica(replicas=1, name="pytorch", image=IMAGE) -> dict:
    return {
        "replicas": replicas,
        "template": {"spec": {"containers": [{"name": name, "image": image}]}},
    }


def job(name="test", **spec) -> PyTorchJob:
    spec.setdefault("pytorchReplicaSpecs", {"Master": replica(), "Worker": replica()})
    return PyTorchJob.from_dict(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": name},
            "spec": spec,
        }
    )


def test_a_valid_job_passes():
    validate_v1_pytorchjob(job())
    validate_v1_pytorchjob(job(pytorchReplicaSpecs={"Worker": replica(3)}))
    validate_v1_pytorchjob(
        job(elasticPolicy={"nProcPerNode": 2}, pytorchReplicaSpecs={"Worker": replica()})
    )


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (job("0-test"), "PyTorchJob name '0-test' is not valid"),
        (
            job(
                pytorchReplicaSpecs={
                    "Master": {"replicas": 1, "template": {"spec": {"containers": []}}}
                }
            ),
            "spec.pytorchReplicaSpecs[Master].template.spec.containers: Required value: must be specified",
        ),
        (
            job(pytorchReplicaSpecs={"Worker": replica(image="")}),
            "spec.pytorchReplicaSpecs[Worker].template.spec.containers[0].image: Required value",
        ),
        (
            job(pytorchReplicaSpecs={"Worker": replica(name="")}),
            "must have at least one container with name pytorch",
        ),
        (
            job(pytorchReplicaSpecs={"Master": replica(2)}),
            "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1",
        ),
        (
            job(pytorchReplicaSpecs={"Master": replica(None)}),
            "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1",
        ),
        (
            job(pytorchReplicaSpecs={"Worker": replica(0)}),
            "spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1",
        ),
        (
            job(
                nprocPerNode="1",
                elasticPolicy={"nProcPerNode": 1},
                pytorchReplicaSpecs={"Worker": replica()},
            ),
            "spec.elasticPolicy.nProcPerNode: Forbidden: must not be used with spec.nprocPerNode",
        ),
        (
            job(elasticPolicy={}, pytorchReplicaSpecs={"Master": replica()}),
            "spec.pytorchReplicaSpecs[Worker]: Required value: must be configured if elastic policy is used",
        ),
        (
            job(pytorchReplicaSpecs={"Chief": replica()}),
            'spec.pytorchReplicaSpecs[Chief]: Unsupported value: "Chief"',
        ),
        (job(pytorchReplicaSpecs={"master": replica()}), 'Unsupported value: "master"'),
        (job(pytorchReplicaSpecs=None), "spec.pytorchReplicaSpecs: Required value"),
        (job(pytorchReplicaSpecs={}), "at least one replica type is required"),
        (job(pytorchReplicaSpecs={"Worker": replica(1001)}), "must be at most 1000"),
        (job(runPolicy={"backoffLimit": -1}), "runPolicy.backoffLimit must be within"),
        (job(runPolicy={"cleanPodPolicy": "Some"}), "runPolicy.cleanPodPolicy must be one of"),
        (job("x" * 57), "is longer than 63 characters; use a shorter PyTorchJob name"),
    ],
)
def test_what_v1_9_and_the_crd_refuse(bad, message):
    with pytest.raises(ValidationError) as info:
        validate_v1_pytorchjob(bad)
    assert message in str(info.value)


def test_min_task_member_names_the_jobs_replica_types():
    """The operator's minTaskMember (D77), checked as for a TFJob."""
    validate_v1_pytorchjob(job(runPolicy={"schedulingPolicy": {"minTaskMember": {"worker": 1}}}))
    with pytest.raises(ValidationError, match="minTaskMember.PS names no replica type"):
        validate_v1_pytorchjob(job(runPolicy={"schedulingPolicy": {"minTaskMember": {"PS": 1}}}))
