"""PyTorchJob types and defaults: the JSON round-trips, v1.9's defaults (its test table)."""

import copy

import pytest

from tf_operator.apis.common.v1.fields import DecodeError
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V0_5_3, DEFAULTS_V1_9
from tf_operator.apis.pytorch.v1.defaults import set_defaults_pytorchjob
from tf_operator.apis.pytorch.v1.types import PyTorchJob


def replica(**extra) -> dict:
    return {"template": {"spec": {"containers": [{"name": "pytorch", "image": "i"}]}}, **extra}


def raw(**spec) -> dict:
    spec.setdefault("pytorchReplicaSpecs", {"Master": replica(replicas=1), "Worker": replica()})
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "job", "namespace": "default", "uid": "u"},
        "spec": spec,
        "status": {"conditions": None, "replicaStatuses": None},
    }


def test_everything_written_round_trips_unknown_fields_included():
    body = raw(
        nprocPerNode="2",
        runPolicy={"cleanPodPolicy": "All", "suspend": False, "future": 1},
        elasticPolicy={
            "minReplicas": 1,
            "maxReplicas": 3,
            "rdzvBackend": "c10d",
            "rdzvConf": [{"key": "k", "value": "v", "x": 1}],
            "standalone": True,
            "metrics": [{"type": "Resource"}],
            "newField": {"a": 1},
        },
        somethingNew=[1],
    )
    body["top"] = "kept"
    assert PyTorchJob.from_dict(copy.deepcopy(body)).to_dict() == body


def test_a_malformed_field_is_named_by_its_path():
    with pytest.raises(DecodeError, match="spec.elasticPolicy.maxReplicas: expected an integer"):
        PyTorchJob.from_dict(raw(elasticPolicy={"maxReplicas": "three"}))
    with pytest.raises(DecodeError, match=r"spec.pytorchReplicaSpecs.Worker.replicas"):
        PyTorchJob.from_dict(raw(pytorchReplicaSpecs={"Worker": replica(replicas="two")}))


def test_v1_9_defaults_apply_unless_the_job_asks_for_v0_5_3s():
    job = PyTorchJob.from_dict(raw())
    assert job.run_policy.defaults is DEFAULTS_V1_9
    assert job.run_policy.clean_pod_policy == "None"  # v1.9's SetDefaults_PyTorchJob
    asked = raw()
    asked["metadata"]["annotations"] = {"tf-operator.kubeflow.org/defaults": "v0.5.3"}
    job = PyTorchJob.from_dict(asked)
    assert job.run_policy.defaults is DEFAULTS_V0_5_3
    assert job.run_policy.clean_pod_policy == "Running"


def test_replica_specs_come_master_first():
    job = PyTorchJob.from_dict(
        raw(pytorchReplicaSpecs={"Worker": replica(), "Master": replica(replicas=1)})
    )
    assert list(job.replica_specs()) == ["Master", "Worker"]
    assert job.has_master()


def test_replica_defaults():
    job = PyTorchJob.from_dict(raw())
    set_defaults_pytorchjob(job)
    for spec in job.replica_specs().values():
        assert spec.replicas == 1
        assert spec.restart_policy == "OnFailure"
        assert spec.containers()[0]["ports"] == [
            {"name": "pytorchjob-port", "containerPort": 23456}
        ]
    assert job.spec.nproc_per_node == "auto"


def test_a_given_port_and_restart_policy_are_kept():
    worker = replica(restartPolicy="Never")
    worker["template"]["spec"]["containers"] = [
        {"name": "sidecar", "image": "s"},
        {
            "name": "pytorch",
            "image": "i",
            "ports": [{"name": "pytorchjob-port", "containerPort": 8080}],
        },
    ]
    job = PyTorchJob.from_dict(raw(pytorchReplicaSpecs={"Worker": worker}))
    set_defaults_pytorchjob(job)
    spec = job.replica_specs()["Worker"]
    assert spec.restart_policy == "Never"
    assert spec.containers()[1]["ports"] == [{"name": "pytorchjob-port", "containerPort": 8080}]
    assert "ports" not in spec.containers()[0]


@pytest.mark.parametrize(
    ("elastic", "workers", "expected"),
    [
        # v1.9's pytorch_defaults_test.go: bounds from the workers, or from each other
        ({}, 1, (1, 1)),
        ({"minReplicas": 1, "maxReplicas": 1}, 1, (1, 1)),
        ({"maxReplicas": 3}, 1, (3, 3)),
        ({"minReplicas": 2}, 1, (2, 2)),
        ({}, None, (1, 1)),  # the Worker's replicas defaulted first
    ],
)
def test_elastic_policy_bounds(elastic, workers, expected):
    worker = replica() if workers is None else replica(replicas=workers)
    job = PyTorchJob.from_dict(raw(elasticPolicy=elastic, pytorchReplicaSpecs={"Worker": worker}))
    set_defaults_pytorchjob(job)
    assert (job.spec.elastic_policy.min_replicas, job.spec.elastic_policy.max_replicas) == expected


def test_nproc_per_node_defaults_to_auto_unless_the_deprecated_field_is_given():
    job = PyTorchJob.from_dict(raw(elasticPolicy={"nProcPerNode": 4}))
    set_defaults_pytorchjob(job)
    assert job.spec.nproc_per_node is None
    job = PyTorchJob.from_dict(raw(nprocPerNode="gpu"))
    set_defaults_pytorchjob(job)
    assert job.spec.nproc_per_node == "gpu"


def test_defaults_are_not_written_back():
    body = raw()
    job = PyTorchJob.from_dict(copy.deepcopy(body))
    set_defaults_pytorchjob(job)
    assert body["spec"]["pytorchReplicaSpecs"]["Worker"] == replica()
