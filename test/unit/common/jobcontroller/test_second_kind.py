"""A second job kind (a minimal PyTorchJob, test/support/pytorchjob.py) runs on the same
reconcilers as TFJob: pods, services, PodGroups, status, clean-up and TTL."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest

from support.fake_clock import FakeClock
from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from support.pytorchjob import PYTORCH_KIND, PYTORCHJOBS
from tf_operator.common.jobcontroller.jobcontroller import (
    JobController,
    JobControllerConfiguration,
)
from tf_operator.k8s.client import PODS, SERVICES
from tf_operator.k8s.informers import SharedInformerFactory

NS = "default"


def template() -> dict:
    container = {
        "name": "pytorch",
        "image": "pytorch:latest",
        "ports": [{"name": "pytorchjob-port", "containerPort": 23456}],
    }
    return {"spec": {"containers": [container]}}


def pytorchjob(workers: int = 2, **spec: object) -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "torch", "namespace": NS},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": template()},
                "Worker": {"replicas": workers, "template": template()},
            },
            **spec,
        },
    }


class Harness:
    """One PyTorchJob controller over the fake client; informers preloaded, never started."""

    def __init__(self, gang: bool = False) -> None:
        self.client = FakeKubeClient()
        self.factory = SharedInformerFactory(self.client, 0)
        self.jobs = self.factory.for_resource(PYTORCHJOBS)
        self.recorder = FakeRecorder()
        config = JobControllerConfiguration(enable_gang_scheduling=gang)
        clock = FakeClock(start=datetime(2026, 1, 1, tzinfo=UTC))
        self.ctr = JobController(
            PYTORCH_KIND, self.client, self.factory, self.jobs, self.recorder, config, clock
        )
        self.ctr.create_batches.concurrent = False  # creates end before sync returns

    def add_job(self, job: dict) -> dict:
        stored = self.client.resource(PYTORCHJOBS).create(copy.deepcopy(job), namespace=NS)
        self.jobs.get_indexer().add(stored)
        return stored

    def observe_created(self, phase: str | None = None) -> None:
        """Deliver the created pods and services to the caches, as their informers would."""
        for resource, informer, handler in (
            (PODS, self.factory.pods(), self.ctr.pods),
            (SERVICES, self.factory.services(), self.ctr.services),
        ):
            for obj in self.client.resource(resource).list(namespace=NS)["items"]:
                if resource == PODS and phase is not None:
                    obj["status"] = {"phase": phase}
                    obj = self.client.resource(PODS).update_status(obj)
                informer.get_indexer().update(obj)
                handler.on_add(obj)
        stored = self.client.resource(PYTORCHJOBS).get("torch", NS)
        self.jobs.get_indexer().update(stored)
        self.client.clear_actions()

    def sync(self) -> bool:
        """Sync once the job informer has caught up with the API (as it would, between syncs)."""
        self.jobs.get_indexer().update(self.client.resource(PYTORCHJOBS).get("torch", NS))
        return self.ctr.sync(f"{NS}/torch")

    def status(self) -> dict:
        return self.client.resource(PYTORCHJOBS).get("torch", NS).get("status") or {}


@pytest.fixture
def harness() -> Harness:
    return Harness()


def test_pods_and_services_carry_the_kinds_labels_env_and_owner(harness):
    job = harness.add_job(pytorchjob(workers=2))
    assert harness.sync() is False  # creates handed to the helpers: the backoff is kept
    pods = {p["metadata"]["name"]: p for p in harness.client.resource(PODS).list()["items"]}
    assert sorted(pods) == ["torch-master-0", "torch-worker-0", "torch-worker-1"]
    worker = pods["torch-worker-1"]
    assert worker["metadata"]["labels"] == {
        "group-name": "kubeflow.org",
        "pytorch-job-name": "torch",
        "pytorch-replica-type": "worker",
        "pytorch-replica-index": "1",
        "training.kubeflow.org/operator-name": "pytorchjob-controller",
        "training.kubeflow.org/job-name": "torch",
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "1",
    }
    master = pods["torch-master-0"]["metadata"]["labels"]
    assert master["pytorch-job-role"] == master["training.kubeflow.org/job-role"] == "master"
    env = {e["name"]: e["value"] for e in worker["spec"]["containers"][0]["env"]}
    assert env == {
        "MASTER_ADDR": "torch-master-0",
        "MASTER_PORT": "23456",
        "WORLD_SIZE": "3",
        "RANK": "2",
    }
    assert worker["metadata"]["ownerReferences"][0]["kind"] == "PyTorchJob"
    assert worker["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
    services = harness.client.resource(SERVICES).list()["items"]
    assert {s["spec"]["ports"][0]["port"] for s in services} == {23456}
    assert [c["reason"] for c in harness.status()["conditions"]] == ["PyTorchJobCreated"]


def test_the_master_decides_success_and_the_clean_up_policy_applies(harness):
    harness.add_job(pytorchjob(workers=1, cleanPodPolicy="All"))
    harness.sync()
    harness.observe_created(phase="Running")
    harness.sync()
    assert ("Running", "PyTorchJobRunning") in {
        (c["type"], c["reason"]) for c in harness.status()["conditions"] if c["status"] == "True"
    }
    # the kind asks for v1.9's status.replicaStatuses[*].selector (TFJob does not)
    assert harness.status()["replicaStatuses"]["Worker"]["selector"] == (
        "training.kubeflow.org/job-name=torch,"
        "training.kubeflow.org/operator-name=pytorchjob-controller,"
        "training.kubeflow.org/replica-type=worker"
    )
    master = harness.client.resource(PODS).get("torch-master-0", NS)
    master["status"] = {"phase": "Succeeded"}
    harness.factory.pods().get_indexer().update(harness.client.resource(PODS).update_status(master))
    harness.sync()  # the master succeeded: the job did
    assert harness.status()["conditions"][-1]["type"] == "Succeeded"
    harness.jobs.get_indexer().update(harness.client.resource(PYTORCHJOBS).get("torch", NS))
    harness.client.clear_actions()
    harness.sync()  # the terminal pass: cleanPodPolicy All deletes every pod and service
    deleted = {(a.resource_plural, a.name) for a in harness.client.filter_actions("delete")}
    assert deleted == {
        ("pods", "torch-master-0"),
        ("pods", "torch-worker-0"),
        ("services", "torch-master-0"),
        ("services", "torch-worker-0"),
    }
    assert "Normal PyTorchJobSucceeded PyTorchJob torch successfully completed." in (
        harness.recorder.events
    )


def test_gang_scheduling_gives_the_job_a_pod_group():
    harness = Harness(gang=True)
    harness.add_job(pytorchjob(workers=3))
    harness.sync()
    groups = harness.client.filter_actions("create", "podgroups")
    assert [a.body["spec"] for a in groups] == [{"minMember": 4}]
    pod = harness.client.resource(PODS).get("torch-worker-2", NS)
    assert pod["spec"]["schedulerName"] == "kube-batch"
    assert pod["metadata"]["annotations"]["volcano.sh/task-spec"] == "worker"


def test_an_invalid_job_is_reported_on_the_job(harness):
    bad = pytorchjob()
    del bad["spec"]["pytorchReplicaSpecs"]["Master"]
    harness.add_job(bad)
    harness.sync()
    (condition,) = harness.status()["conditions"]
    assert (condition["type"], condition["reason"]) == ("Failed", "InvalidPyTorchJobSpec")
    assert "a Master replica is required" in condition["message"]
