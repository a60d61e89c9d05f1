"""TFJob JSON round trip, decoding errors and status serialisation."""

from datetime import UTC, datetime

import pytest

from tf_operator.apis.common.v1.types import (
    DecodeError,
    JobCondition,
    JobStatus,
    ReplicaStatus,
)
from tf_operator.apis.tensorflow.v1.types import TFJob, ordered_replica_types

RAW = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "mnist", "namespace": "ns", "uid": "u1", "labels": {"a": "b"}},
    "spec": {
        "cleanPodPolicy": "All",
        "ttlSecondsAfterFinished": 10,
        "activeDeadlineSeconds": 100,
        "backoffLimit": 3,
        "futureField": {"x": 1},
        "tfReplicaSpecs": {
            "Worker": {
                "replicas": 2,
                "restartPolicy": "OnFailure",
                "template": {
                    "metadata": {"labels": {"x": "y"}},
                    "spec": {"containers": [{"name": "tensorflow", "image": "i", "foo": 1}]},
                },
                "unknownReplicaField": True,
            }
        },
    },
    "status": {
        "conditions": [
            {
                "type": "Created",
                "status": "True",
                "reason": "TFJobCreated",
                "message": "TFJob mnist is created.",
                "lastUpdateTime": "2019-07-01T12:00:00Z",
                "lastTransitionTime": "2019-07-01T12:00:00Z",
            }
        ],
        "replicaStatuses": {"Worker": {"active": 2}},
        "startTime": "2019-07-01T12:00:01Z",
        "someStatusExtra": "kept",
    },
    "topLevelExtra": [1, 2],
}


def test_round_trip_keeps_unknown_fields():
    job = TFJob.from_dict(RAW)
    assert job.spec.tf_replica_specs["Worker"].replicas == 2
    assert job.status.start_time == datetime(2019, 7, 1, 12, 0, 1, tzinfo=UTC)
    assert job.to_dict() == RAW


def test_status_serialises_nulls_and_omits_zero_counts():
    status = JobStatus()
    assert status.to_dict() == {"conditions": None, "replicaStatuses": None}
    status.replica_statuses = {"Worker": ReplicaStatus()}
    assert status.to_dict()["replicaStatuses"] == {"Worker": {}}


def test_condition_times_have_second_precision():
    t = datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)
    cond = JobCondition("Running", "True", "r", "m", t, t)
    assert cond.to_dict()["lastUpdateTime"] == "2020-01-02T03:04:05Z"


@pytest.mark.parametrize(
    "mutate, path",
    [
        (lambda d: d["spec"]["tfReplicaSpecs"]["Worker"].update(replicas="two"), "replicas"),
        (lambda d: d["spec"].update(tfReplicaSpecs=[1]), "tfReplicaSpecs"),
        (lambda d: d["spec"].update(backoffLimit=True), "backoffLimit"),
        (lambda d: d["status"].update(startTime="yesterday"), "startTime"),
        (lambda d: d.update(spec="oops"), "spec"),
        (lambda d: d["spec"]["tfReplicaSpecs"]["Worker"].update(template=5), "template"),
    ],
)
def test_malformed_raise_decode_error_naming_the_field(mutate, path):
    import copy

    raw = copy.deepcopy(RAW)
    mutate(raw)
    with pytest.raises(DecodeError, match=path):
        TFJob.from_dict(raw)


def test_fixed_replica_type_order():
    specs = {"Evaluator": 1, "Worker": 1, "Zed": 1, "PS": 1, "Chief": 1, "Abc": 1}
    assert ordered_replica_types(specs) == ["PS", "Worker", "Chief", "Evaluator", "Abc", "Zed"]
