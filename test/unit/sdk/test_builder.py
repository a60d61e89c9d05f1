"""tfjob(...) builds valid TFJobs and refuses invalid ones."""

import pytest

from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.sdk import tfjob


def test_defaults_one_ps_two_workers_with_a_tensorflow_container():
    job = tfjob("mnist", image="tf:1", command=["python", "train.py"])
    assert job["apiVersion"] == "kubeflow.org/v1" and job["kind"] == "TFJob"
    specs = job["spec"]["tfReplicaSpecs"]
    assert {k: v["replicas"] for k, v in specs.items()} == {"PS": 1, "Worker": 2}
    (container,) = specs["Worker"]["template"]["spec"]["containers"]
    assert container == {"name": "tensorflow", "image": "tf:1", "command": ["python", "train.py"]}
    assert TFJob.from_dict(job).to_dict()["spec"]["tfReplicaSpecs"]["PS"]["replicas"] == 1


def test_chief_evaluator_env_resources_and_policies():
    job = tfjob(
        "j",
        command=["run"],
        ps=0,
        workers=3,
        chief=True,
        evaluator=True,
        namespace="team",
        env={"A": 1},
        resources={"limits": {"nvidia.com/gpu": 1}},
        restart_policy="ExitCode",
        clean_pod_policy="None",
        backoff_limit=2,
        labels={"x": "y"},
    )
    specs = job["spec"]["tfReplicaSpecs"]
    assert set(specs) == {"Worker", "Chief", "Evaluator"}
    assert specs["Chief"]["replicas"] == 1 and specs["Worker"]["restartPolicy"] == "ExitCode"
    container = specs["Chief"]["template"]["spec"]["containers"][0]
    assert container["image"] == "python:3.11-slim"  # the default when only a command is given
    assert container["env"] == [{"name": "A", "value": "1"}]
    assert container["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    assert job["metadata"] == {"name": "j", "namespace": "team", "labels": {"x": "y"}}
    assert job["spec"]["cleanPodPolicy"] == "None" and job["spec"]["backoffLimit"] == 2
    # each replica type gets its own container dict: editing one leaves the others alone
    container["image"] = "other"
    assert specs["Worker"]["template"]["spec"]["containers"][0]["image"] == "python:3.11-slim"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give an image, a command"),
        ({"image": "i", "workers": -1}, "must not be negative"),
        ({"image": "i", "ps": 0, "workers": 0}, "at least one replica type"),
        ({"image": "i", "name": "x" * 60}, "longer than 63"),
    ],
)
def test_invalid_jobs_raise_value_error(kwargs, message):
    kwargs.setdefault("name", "j")
    with pytest.raises(ValueError, match=message):
        tfjob(**kwargs)
