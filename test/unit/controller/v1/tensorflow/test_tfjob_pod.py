"""A TFJob's own pod facts, ported from v0.5.3's pod_test.go plus its divergences
(docs/divergences.md): TF_CONFIG, its labels and the Chief's master role, the worker-0 rule,
v0.5.3's retryable exit codes. What every kind's pods share is tested in
``unit/common/jobcontroller/test_pod.py``."""

import json

import pytest

from tf_operator.apis.common.v1.run_policy import DEFAULTS_V0_5_3, DEFAULTS_V1_9
from tf_operator.apis.tensorflow.v1.defaults import set_defaults_tfjob
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.controller.v1.tensorflow.tensorflow import set_cluster_spec


def _job(tfu, *args, namespace="default", **kwargs) -> TFJob:
    job = TFJob.from_dict(tfu.new_tfjob(*args, namespace=namespace, **kwargs))
    set_defaults_tfjob(job)
    return job


@pytest.mark.parametrize(
    "worker, ps, evaluator, namespace, domain, expected",
    [
        (
            1,
            0,
            0,
            "ns0",
            "",
            '{"cluster":{"worker":["test-tfjob-worker-0.ns0.svc:2222"]},'
            '"task":{"type":"worker","index":0},"environment":"cloud"}',
        ),
        (
            1,
            0,
            0,
            "ns1",
            "tf.training.com",
            '{"cluster":{"worker":["test-tfjob-worker-0.ns1.svc.tf.training.com:2222"]},'
            '"task":{"type":"worker","index":0},"environment":"cloud"}',
        ),
        (
            1,
            1,
            0,
            "ns2",
            "tf.training.org",
            '{"cluster":{"ps":["test-tfjob-ps-0.ns2.svc.tf.training.org:2222"],'
            '"worker":["test-tfjob-worker-0.ns2.svc.tf.training.org:2222"]},'
            '"task":{"type":"worker","index":0},"environment":"cloud"}',
        ),
        (
            1,
            1,
            1,
            "ns3",
            "tf.training.io",
            '{"cluster":{"ps":["test-tfjob-ps-0.ns3.svc.tf.training.io:2222"],'
            '"worker":["test-tfjob-worker-0.ns3.svc.tf.training.io:2222"]},'
            '"task":{"type":"worker","index":0},"environment":"cloud"}',
        ),
    ],
)
def test_cluster_spec(tfu, monkeypatch, worker, ps, evaluator, namespace, domain, expected):
    monkeypatch.setenv("CUSTOM_CLUSTER_DOMAIN", domain)
    job = _job(tfu, worker, ps, evaluator=evaluator, namespace=namespace)
    template = job.spec.tf_replica_specs["Worker"].template
    set_cluster_spec(template, job, "worker", "0")
    assert template["spec"]["containers"][0]["env"][0]["value"] == expected


def test_cluster_spec_spec_example(tfu, monkeypatch):
    monkeypatch.delenv("CUSTOM_CLUSTER_DOMAIN", raising=False)
    job = _job(tfu, 2, 1, chief=1, name="mnist", namespace="kubeflow")
    template = job.spec.tf_replica_specs["Worker"].template
    set_cluster_spec(template, job, "worker", 1)
    value = template["spec"]["containers"][0]["env"][0]["value"]
    assert list(json.loads(value)["cluster"]) == ["chief", "ps", "worker"]
    assert value.endswith('"task":{"type":"worker","index":1},"environment":"cloud"}')


def test_existing_tf_config_is_replaced_not_duplicated(tfu):
    job = _job(tfu, 1)
    template = job.spec.tf_replica_specs["Worker"].template
    template["spec"]["containers"][0]["env"] = [
        {"name": "A", "value": "1"},
        {"name": "TF_CONFIG", "value": "user"},
    ]
    set_cluster_spec(template, job, "worker", 0)
    env = template["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["A", "TF_CONFIG"]
    assert env[1]["value"] != "user"


@pytest.mark.parametrize(
    "code, retryable, retryable_v1_9",
    [
        (130, True, True),
        (137, True, True),
        (143, True, True),
        (138, True, True),
        (1, False, False),
        (2, False, False),
        (126, False, False),
        (127, False, False),
        (128, False, True),
        (139, False, True),
        (0, False, False),
        (0xBEEF, False, True),
        (255, False, True),
    ],
)
def test_retryable_exit_codes(code, retryable, retryable_v1_9):
    """v0.5.3's explicit list; v1.9's train_util.IsRetryableExitCode is code >= 128 (D57)."""
    assert DEFAULTS_V0_5_3.is_retryable_exit_code(code) is retryable
    assert DEFAULTS_V1_9.is_retryable_exit_code(code) is retryable_v1_9


def test_copy_labels_and_annotations(harness, tfu):
    job = tfu.new_tfjob(worker=1)
    tmeta = job["spec"]["tfReplicaSpecs"]["Worker"]["template"].setdefault("metadata", {})
    tmeta["labels"] = {"label1": "1", "tf-replica-index": "overridden"}
    tmeta["annotations"] = {"annotation1": "1"}
    job = harness.add_job(job)
    harness.sync(job)
    pod = harness.created("pods")[0]
    assert pod["metadata"]["labels"] == {
        "label1": "1",
        "group-name": "kubeflow.org",
        "tf-job-name": "test-tfjob",
        "tf-replica-type": "worker",
        "tf-replica-index": "0",
        "tf-job-role": "master",
        # training-operator v1.9's, which Kueue and the Kubeflow SDKs select on (D63)
        "training.kubeflow.org/operator-name": "tfjob-controller",
        "training.kubeflow.org/job-name": "test-tfjob",
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "0",
        "training.kubeflow.org/job-role": "master",
        "training.kubeflow.org/job-uid": job["metadata"]["uid"],  # the creating job's (D154)
    }
    assert pod["metadata"]["annotations"] == {"annotation1": "1"}
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["containers"][0]["env"][0]["name"] == "TF_CONFIG"


def test_master_role_goes_to_chief_when_present(harness, tfu):
    job = harness.add_job(tfu.new_tfjob(worker=2, chief=1))
    harness.sync(job)
    roles = {
        p["metadata"]["name"]: p["metadata"]["labels"].get("tf-job-role")
        for p in harness.created("pods")
    }
    assert roles == {
        p["metadata"]["name"]: p["metadata"]["labels"].get("training.kubeflow.org/job-role")
        for p in harness.created("pods")
    }
    assert roles == {
        "test-tfjob-worker-0": None,
        "test-tfjob-worker-1": None,
        "test-tfjob-chief-0": "master",
    }


def test_worker_0_succeeded_without_container_status_completes_the_job(harness, tfu):
    # v0.5.3 needed the tensorflow container's exit code 0 (divergence D22).
    job = harness.add_job(tfu.new_tfjob(worker=2))
    harness.add_pod(tfu.new_pod(job, "worker", 0, "Succeeded"))
    harness.add_pod(tfu.new_pod(job, "worker", 1, "Running"))
    harness.add_services(job, "worker", 2)
    harness.sync(job)
    assert ("Succeeded", "True", "TFJobSucceeded") in harness.conditions(job)
