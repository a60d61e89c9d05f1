"""XGBoostJob types, defaults and validation: the JSON round-trips; v1.9's defaults
(xgboost_defaults_test.go's table); what v1.9's webhook refuses (xgboostjob_webhook_test.go's
table), for clusters that do not enforce the CRD's rules."""

import copy

import pytest

from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9
from tf_operator.apis.xgboost.v1.defaults import set_defaults_xgboostjob
from tf_operator.apis.xgboost.v1.types import XGBoostJob
from tf_operator.apis.xgboost.validation.validation import ValidationError, validate_v1_xgboostjob

IMAGE = "docker.io/kubeflow/xgboost-dist-iris:latest"


def replica(name="xgboost", image=IMAGE, **extra) -> dict:
    return {"template": {"spec": {"containers": [{"name": name, "image": image}]}}, **extra}


def raw(name="test", **spec) -> dict:
    spec.setdefault("xgbReplicaSpecs", {"Master": replica(replicas=1), "Worker": replica()})
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "XGBoostJob",
        "metadata": {"name": name, "namespace": "default", "uid": "u"},
        "spec": spec,
    }


def test_everything_written_round_trips_unknown_fields_included():
    body = raw(runPolicy={"cleanPodPolicy": "All", "future": 1}, newField={"a": 1})
    body["status"] = {"conditions": None, "replicaStatuses": None}
    assert XGBoostJob.from_dict(copy.deepcopy(body)).to_dict() == body


def test_replica_types_in_order_and_the_run_policy_gets_v1_9s_defaults():
    job = XGBoostJob.from_dict(raw(xgbReplicaSpecs={"Worker": replica(), "Master": replica()}))
    assert list(job.replica_specs()) == ["Master", "Worker"]
    assert job.run_policy.clean_pod_policy == "None"  # v1.9's default


@pytest.mark.parametrize(
    ("written", "restart", "replicas", "ports"),
    [
        # "set spec with minimum setting"
        ({}, "Never", 1, [{"name": "xgboostjob-port", "containerPort": 9999}]),
        # "Set spec with restart policy"
        (
            {"restartPolicy": "OnFailure"},
            "OnFailure",
            1,
            [{"name": "xgboostjob-port", "containerPort": 9999}],
        ),
        # "Set spec with replicas"
        ({"replicas": 3}, "Never", 3, [{"name": "xgboostjob-port", "containerPort": 9999}]),
        # "Set spec with default node port name and port": a named port is kept
        (
            {"ports": [{"name": "xgboostjob-port", "containerPort": 9000}]},
            "Never",
            1,
            [{"name": "xgboostjob-port", "containerPort": 9000}],
        ),
    ],
)
def test_v1_9s_defaults(written, restart, replicas, ports):
    worker = replica()
    if "ports" in written:
        worker["template"]["spec"]["containers"][0]["ports"] = written.pop("ports")
    worker.update(written)
    job = XGBoostJob.from_dict(raw(xgbReplicaSpecs={"Worker": worker}), DEFAULTS_V1_9)
    set_defaults_xgboostjob(job)
    spec = job.spec.xgb_replica_specs["Worker"]
    assert (spec.restart_policy, spec.replicas, spec.containers()[0]["ports"]) == (
        restart,
        replicas,
        ports,
    )


def test_a_valid_job_passes():
    validate_v1_xgboostjob(
        XGBoostJob.from_dict(raw(runPolicy={"managedBy": "kubeflow.org/training-operator"}))
    )
    validate_v1_xgboostjob(
        XGBoostJob.from_dict(raw(xgbReplicaSpecs={"Master": replica(replicas=1)}))
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (raw("-test"), "XGBoostJob name '-test' is not valid"),
        (
            raw(
                xgbReplicaSpecs={
                    "Master": {"replicas": 1, "template": {"spec": {"containers": []}}}
                }
            ),
            "spec.xgbReplicaSpecs[Master].template.spec.containers: Required value: must be "
            "specified",
        ),
        (
            raw(xgbReplicaSpecs={"Master": replica(image="", replicas=1)}),
            "spec.xgbReplicaSpecs[Master].template.spec.containers[0].image: Required value",
        ),
        (
            raw(xgbReplicaSpecs={"Master": replica(name="", replicas=1)}),
            "must have at least one container with name xgboost",
        ),
        (
            raw(xgbReplicaSpecs={"Master": replica(replicas=2)}),
            "spec.xgbReplicaSpecs[Master].replicas: Forbidden: must be 1",
        ),
        (
            raw(xgbReplicaSpecs={"Worker": replica(replicas=1)}),
            "spec.xgbReplicaSpecs[Master]: Required value: must be present",
        ),
        (
            raw(xgbReplicaSpecs={"Master": replica(replicas=1), "PS": replica()}),
            'spec.xgbReplicaSpecs[PS]: Unsupported value: "PS"',
        ),
        (raw(xgbReplicaSpecs=None), "spec.xgbReplicaSpecs: Required value"),
        (raw(runPolicy={"backoffLimit": -1}), "runPolicy.backoffLimit must be within"),
    ],
)
def test_what_v1_9s_webhook_refuses_is_refused(body, message):
    with pytest.raises(ValidationError, match=None) as info:
        validate_v1_xgboostjob(XGBoostJob.from_dict(body))
    assert message in str(info.value)
