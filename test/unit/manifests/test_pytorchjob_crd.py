"""The shipped PyTorchJob CRD on the local cluster's API server: its schema and CEL rules
refuse at admission what training-operator v1.9's PyTorchJob webhook refuses (its test table),
with v1.9's field paths, and keep everything a v1.9 user writes."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from localcluster.controlplane.emulated import Registry, StatusError
from support.crd import PYTORCH_CRD_FILE, install_crds

PYTORCHJOBS = ("kubeflow.org", "v1", "pytorchjobs")
IMAGE = "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"
_names = iter(range(10**6))


@pytest.fixture(scope="module")
def reg():
    r = Registry()
    install_crds(r, PYTORCH_CRD_FILE)
    yield r
    r.stop()


def replica(replicas=1, container="pytorch", image=IMAGE) -> dict:
    return {
        "replicas": replicas,
        "restartPolicy": "OnFailure",
        "template": {"spec": {"containers": [{"name": container, "image": image}]}},
    }


def job(name=None, **spec) -> dict:
    spec.setdefault("pytorchReplicaSpecs", {"Master": replica(), "Worker": replica()})
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name or f"test-{next(_names)}"},
        "spec": spec,
    }


def rejected(reg, body: dict) -> str:
    with pytest.raises(StatusError) as info:
        reg.create(PYTORCHJOBS, "default", copy.deepcopy(body))
    assert (info.value.code, info.value.reason) == (422, "Invalid"), info.value.message
    assert info.value.status["details"]["kind"] == "PyTorchJob"
    return " | ".join(
        f"{c['field']}: {c['message']}" for c in info.value.status["details"]["causes"]
    )


def test_a_valid_job_is_stored_as_written(reg):
    body = job(
        nprocPerNode="2",
        runPolicy={"cleanPodPolicy": "None", "schedulingPolicy": {"queue": "q"}},
    )
    stored = reg.create(PYTORCHJOBS, "default", copy.deepcopy(body))
    body["spec"]["runPolicy"]["suspend"] = False  # the schema's default
    assert stored["spec"] == body["spec"]


def test_a_job_without_a_run_policy_gets_an_empty_one(reg):
    """D90, as for TFJob: the v1.9 SDK's model cannot read a job without runPolicy."""
    body = job()
    assert reg.create(PYTORCHJOBS, "default", body)["spec"]["runPolicy"] == {"suspend": False}


def test_an_elastic_job_is_stored_as_written(reg):
    elastic = {
        "rdzvBackend": "c10d",
        "minReplicas": 1,
        "maxReplicas": 3,
        "maxRestarts": 3,
        "rdzvConf": [{"key": "timeout", "value": "900"}],
        "metrics": [{"type": "Resource", "resource": {"name": "cpu"}}],
    }
    body = job(elasticPolicy=elastic, pytorchReplicaSpecs={"Worker": replica(2)})
    assert reg.create(PYTORCHJOBS, "default", body)["spec"]["elasticPolicy"] == elastic


@pytest.mark.parametrize(
    ("mutate", "why"),
    [
        # v1.9's webhook table, case by case
        (lambda b: b["metadata"].update(name="0-test"), "metadata.name: Invalid value"),
        (
            lambda b: b["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"].update(
                containers=[]
            ),
            "must have at least one container with name pytorch",
        ),
        (
            lambda b: b["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][
                0
            ].update(image=""),
            "Required value: every container needs an image",
        ),
        (
            lambda b: b["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][
                0
            ].update(name=""),
            "must have at least one container with name pytorch",
        ),
        (
            lambda b: b["spec"]["pytorchReplicaSpecs"]["Master"].update(replicas=2),
            "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1",
        ),
        (
            lambda b: b["spec"]["pytorchReplicaSpecs"]["Master"].pop("replicas"),
            "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1",
        ),
        (
            lambda b: b["spec"]["pytorchReplicaSpecs"]["Worker"].update(replicas=0),
            "spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1",
        ),
        (
            lambda b: b["spec"].update(nprocPerNode="1", elasticPolicy={"nProcPerNode": 1}),
            "spec.elasticPolicy.nProcPerNode: Forbidden: must not be used with spec.nprocPerNode",
        ),
        (
            lambda b: b["spec"].update(elasticPolicy={}, pytorchReplicaSpecs={"Master": replica()}),
            "spec.pytorchReplicaSpecs[Worker]: Required value",
        ),
        (
            lambda b: b["spec"].update(runPolicy={"managedBy": "other-job-controller"}),
            'Unsupported value: "other-job-controller"',
        ),
        # the replica types are v1.9's, spelled as it spells them (Chief in Master's place:
        # a third type would exceed maxProperties, an error that keeps kube-apiserver from
        # running the CEL rules at all)
        (
            lambda b: b["spec"]["pytorchReplicaSpecs"].update(
                Chief=b["spec"]["pytorchReplicaSpecs"].pop("Master")
            ),
            'spec.pytorchReplicaSpecs[Chief]: Unsupported value: "Chief": supported values: '
            '"Master", "Worker"',
        ),
        (
            lambda b: b["spec"].update(pytorchReplicaSpecs={"worker": replica()}),
            'Unsupported value: "worker"',
        ),
        # what the TFJob CRD bounds too (D81)
        (lambda b: b["spec"].update(pytorchReplicaSpecs={}), "should have at least 1 properties"),
        (lambda b: b["spec"].pop("pytorchReplicaSpecs"), "Required value"),
        (
            lambda b: b["spec"]["pytorchReplicaSpecs"]["Worker"].update(replicas=1001),
            "less than or equal to 1000",
        ),
        (
            lambda b: b["spec"]["pytorchReplicaSpecs"]["Worker"].update(restartPolicy="Sometimes"),
            "Unsupported value",
        ),
        (
            lambda b: b["spec"].update(runPolicy={"backoffLimit": -1}),
            "greater than or equal to 0",
        ),
        (
            lambda b: b["spec"].update(runPolicy={"cleanPodPolicy": "Some"}),
            "Unsupported value",
        ),
        (
            lambda b: b["metadata"].update(name="x" * 57),
            "is too long: the Service names",
        ),
    ],
)
def test_what_v1_9_refuses_is_refused(reg, mutate, why):
    body = job()
    mutate(body)
    assert why in rejected(reg, body)


def _update(reg, name: str, edit) -> dict:
    current = reg.get(PYTORCHJOBS, "default", name)
    edit(current)
    return reg.update(PYTORCHJOBS, "default", name, current)


def test_managed_by_and_the_queue_are_immutable(reg):
    name = f"imm-{next(_names)}"
    reg.create(
        PYTORCHJOBS,
        "default",
        job(
            name,
            runPolicy={
                "managedBy": "kueue.x-k8s.io/multikueue",
                "schedulingPolicy": {"queue": "a"},
            },
        ),
    )
    with pytest.raises(StatusError, match="spec.runPolicy.managedBy is immutable"):
        _update(reg, name, lambda j: j["spec"]["runPolicy"].pop("managedBy"))
    with pytest.raises(StatusError, match="spec.runPolicy.schedulingPolicy.queue is immutable"):
        _update(reg, name, lambda j: j["spec"]["runPolicy"]["schedulingPolicy"].update(queue="b"))


def test_the_scale_subresource_scales_the_workers(reg):
    name = f"scale-{next(_names)}"
    reg.create(PYTORCHJOBS, "default", job(name))
    crd = reg.get(
        ("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
        None,
        "pytorchjobs.kubeflow.org",
    )
    scale = crd["spec"]["versions"][0]["subresources"]["scale"]
    assert scale == {
        "specReplicasPath": ".spec.pytorchReplicaSpecs.Worker.replicas",
        "statusReplicasPath": ".status.replicaStatuses.Worker.active",
        "labelSelectorPath": ".status.replicaStatuses.Worker.selector",
    }


@pytest.mark.parametrize(
    "path",
    sorted((Path(__file__).resolve().parents[3] / "examples/pytorch").rglob("*.yaml")),
    ids=str,
)
def test_every_pytorch_example_is_admitted_as_written(reg, path):
    doc = yaml.safe_load(path.read_text())
    doc["metadata"]["name"] = f"ex-{next(_names)}"
    stored = reg.create(PYTORCHJOBS, "default", copy.deepcopy(doc))
    assert stored["spec"]["pytorchReplicaSpecs"] == doc["spec"]["pytorchReplicaSpecs"]


def test_min_task_member_is_keyed_by_the_jobs_replica_types(reg):
    """The operator's minTaskMember (D77), as on a TFJob."""
    body = job(runPolicy={"schedulingPolicy": {"minTaskMember": {"master": 1, "Worker": 2}}})
    stored = reg.create(PYTORCHJOBS, "default", copy.deepcopy(body))
    assert stored["spec"]["runPolicy"]["schedulingPolicy"]["minTaskMember"] == {
        "master": 1,
        "Worker": 2,
    }
    unknown = job(runPolicy={"schedulingPolicy": {"minTaskMember": {"PS": 1}}})
    assert "names a replica type the job does not have" in rejected(reg, unknown)


# ------------------------------------------------------------------ D69: ports, int32, as TFJob
@pytest.mark.parametrize("port", [70000, 0, -1, True, 23456.5, "23456", "abc", None])
@pytest.mark.parametrize("rtype", ["Master", "Worker"])
def test_container_ports_must_be_integers_from_1_to_65535(reg, rtype, port):
    """The pytorch container's pytorchjob-port becomes MASTER_PORT and the replica's Service."""
    body = job()
    entry = {"name": "pytorchjob-port"}
    if port is not None:
        entry["containerPort"] = port
    container = body["spec"]["pytorchReplicaSpecs"][rtype]["template"]["spec"]["containers"][0]
    container["ports"] = [entry]
    why = rejected(reg, body)
    assert f"spec.pytorchReplicaSpecs.{rtype}.template.spec.containers[0].ports[0]" in why
    assert "containerPort" in why


def test_a_valid_port_is_admitted_as_written(reg):
    body = job()
    ports = [{"name": "pytorchjob-port", "containerPort": 23456, "protocol": "TCP"}]
    for spec in body["spec"]["pytorchReplicaSpecs"].values():
        spec["template"]["spec"]["containers"][0]["ports"] = copy.deepcopy(ports)
    stored = reg.create(PYTORCHJOBS, "default", copy.deepcopy(body))
    assert stored["spec"]["pytorchReplicaSpecs"] == body["spec"]["pytorchReplicaSpecs"]


@pytest.mark.parametrize("field", ["ttlSecondsAfterFinished", "backoffLimit"])
def test_int32_fields_stop_at_int32(reg, field):
    """The operator refuses more (D69): so does the CRD."""
    why = rejected(reg, job(runPolicy={field: 2**31}))
    assert f"spec.runPolicy.{field}" in why
    assert "should be less than or equal to 2147483647" in why
    assert reg.create(PYTORCHJOBS, "default", job(runPolicy={field: 2**31 - 1}))
