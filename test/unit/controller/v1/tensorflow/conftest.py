"""Sample-controller style harness for the TFJob controller.

Objects are created in a FakeKubeClient (so live GETs, deletes and status writes work) and the
stored copies are preloaded into the informers' indexers; informers are never started. A test
runs one sync and inspects the exact API actions, events and the written status.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest

from support.fake_clock import FakeClock
from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.app.options import ServerOption
from tf_operator.app.server import controller_configuration
from tf_operator.controller.v1.tensorflow import TFJOBS, new_tf_controller
from tf_operator.controller.v1.tensorflow.kind import TFJOB_KIND
from tf_operator.k8s.client import PODS, SERVICES
from tf_operator.k8s.informers import SharedInformerFactory

TEST_IMAGE = "test-image-for-kubeflow-tf-operator:latest"
TEST_NAME = "test-tfjob"
START = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def replica_template() -> dict:
    return {
        "spec": {
            "containers": [
                {
                    "name": "tensorflow",
                    "image": TEST_IMAGE,
                    "args": ["Fake", "Fake"],
                    "ports": [{"name": "tfjob-port", "containerPort": 2222}],
                }
            ]
        }
    }


# v0.5.3's run-policy fields, which training-operator v1.9 moved into spec.runPolicy.
RUN_POLICY_FIELDS = (
    "cleanPodPolicy",
    "ttlSecondsAfterFinished",
    "activeDeadlineSeconds",
    "backoffLimit",
)


def new_tfjob(
    worker: int = 1,
    ps: int = 0,
    chief: int = 0,
    evaluator: int = 0,
    name: str = TEST_NAME,
    namespace: str = "default",
    run_policy_in: str = "spec",
    **spec: object,
) -> dict:
    """A TFJob dict like v0.5.3's testutil.NewTFJob/NewTFJobWithChief/...WithEvaluator; with
    ``run_policy_in="runPolicy"`` the run-policy fields go where v1.9 puts them."""
    if run_policy_in == "runPolicy":
        spec["runPolicy"] = {k: spec.pop(k) for k in RUN_POLICY_FIELDS if k in spec}
    specs: dict = {}
    for rtype, count in (("Worker", worker), ("PS", ps), ("Evaluator", evaluator)):
        if count > 0:
            specs[rtype] = {"replicas": count, "template": replica_template()}
    if chief:
        specs["Chief"] = {"template": replica_template()}  # replicas defaulted to 1
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"tfReplicaSpecs": specs, **spec},
    }


def owner_ref(job: dict) -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "name": job["metadata"]["name"],
        "uid": job["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def job_labels(job: dict) -> dict:
    return {"group-name": "kubeflow.org", "tf-job-name": job["metadata"]["name"]}


def new_pod(
    job: dict, rt: str, index: int, phase: str = "Pending", name: str | None = None
) -> dict:
    labels = {**job_labels(job), "tf-replica-type": rt, "tf-replica-index": str(index)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name or f"{job['metadata']['name']}-{rt}-{index}",
            "namespace": job["metadata"]["namespace"],
            "labels": labels,
            "ownerReferences": [owner_ref(job)],
        },
        "spec": {"containers": [{"name": "tensorflow", "image": TEST_IMAGE}]},
        "status": {"phase": phase},
    }


def new_service(job: dict, rt: str, index: int, name: str | None = None) -> dict:
    labels = {**job_labels(job), "tf-replica-type": rt, "tf-replica-index": str(index)}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name or f"{job['metadata']['name']}-{rt}-{index}",
            "namespace": job["metadata"]["namespace"],
            "labels": labels,
            "ownerReferences": [owner_ref(job)],
        },
        "spec": {"clusterIP": "None"},
    }


class Harness:
    def __init__(
        self,
        gang: bool = False,
        scheduler: str = "kube-batch",
        client: FakeKubeClient | None = None,
        pod_updates_batch_period: float | None = None,  # None: the flag's default
        defaults: str = "v0.5.3",  # --defaults
    ) -> None:
        self.client = client or FakeKubeClient()
        self.clock = FakeClock(start=START)
        self.factory = SharedInformerFactory(self.client, 0)
        self.tfjob_informer = self.factory.for_resource(TFJOBS)
        self.recorder = FakeRecorder()
        options = ServerOption(
            enable_gang_scheduling=gang, gang_scheduler_name=scheduler, defaults=defaults
        )
        if pod_updates_batch_period is not None:
            options.pod_updates_batch_period = pod_updates_batch_period
        self.ctr = new_tf_controller(
            self.client,
            self.factory,
            self.tfjob_informer,
            self.recorder,
            controller_configuration(options),
            self.clock,
        )
        self.ctr.create_batches.concurrent = (
            False  # exact action order (tf_operator.k8s.controller.slow_start)
        )
        self.pod_informer = self.factory.pods()
        self.service_informer = self.factory.services()

    # ---- preloading ----

    def add_job(self, job: dict, status: dict | None = None) -> dict:
        stored = self.client.resource(TFJOBS).create(copy.deepcopy(job), namespace="default")
        if status is not None:
            stored["status"] = status
            stored = self.client.resource(TFJOBS).update_status(stored, namespace="default")
        self.tfjob_informer.get_indexer().add(stored)
        self.client.clear_actions()
        return stored

    def cache_job(self, job: dict) -> None:
        """Put a (possibly changed) job into the cache only."""
        self.tfjob_informer.get_indexer().update(job)

    def add_pod(self, pod: dict, cache: bool = True) -> dict:
        stored = self.client.resource(PODS).create(copy.deepcopy(pod), namespace="default")
        if pod.get("status"):
            stored["status"] = pod["status"]
            stored = self.client.resource(PODS).update_status(stored, namespace="default")
        if cache:
            self.pod_informer.get_indexer().add(stored)
        self.client.clear_actions()
        return stored

    def add_service(self, service: dict) -> dict:
        stored = self.client.resource(SERVICES).create(copy.deepcopy(service), namespace="default")
        self.service_informer.get_indexer().add(stored)
        self.client.clear_actions()
        return stored

    def add_pods(
        self,
        job: dict,
        rt: str,
        pending: int = 0,
        active: int = 0,
        succeeded: int = 0,
        failed: int = 0,
        restart_counts: list[int] | None = None,
    ) -> None:
        """Like testutil.SetPodsStatuses: consecutive indices, pending first."""
        index = 0
        for phase, count in (
            ("Pending", pending),
            ("Running", active),
            ("Succeeded", succeeded),
            ("Failed", failed),
        ):
            for i in range(count):
                pod = new_pod(job, rt, index, phase)
                if phase == "Running" and restart_counts is not None:
                    pod["status"]["containerStatuses"] = [
                        {"name": "tensorflow", "restartCount": restart_counts[i]}
                    ]
                self.add_pod(pod)
                index += 1

    def add_services(self, job: dict, rt: str, count: int) -> None:
        for i in range(count):
            self.add_service(new_service(job, rt, i))

    # ---- running and inspecting ----

    def decoded(self, job: dict) -> TFJob:
        """The job as the controller decodes it from the cache (defaults applied)."""
        decoded = TFJOB_KIND.decode(
            self.tfjob_informer.get_indexer().get(job), self.ctr.config.defaults
        )
        TFJOB_KIND.set_defaults(decoded)
        return decoded

    def sync(self, job: dict) -> bool:
        return self.ctr.sync(f"{job['metadata']['namespace']}/{job['metadata']['name']}")

    def actions(self, verb: str = "*", plural: str = "*") -> list[tuple[str, str, str | None]]:
        return [
            (a.verb, a.resource_plural, a.name)
            for a in self.client.filter_actions(verb, plural)
            if a.verb not in ("list", "watch")
        ]

    def created(self, plural: str) -> list[dict]:
        return [a.body for a in self.client.filter_actions("create", plural)]

    def deleted(self, plural: str) -> list[str]:
        return [a.name for a in self.client.filter_actions("delete", plural)]

    def stored_job(self, job: dict) -> dict:
        return self.client.resource(TFJOBS).get(job["metadata"]["name"], namespace="default")

    def status(self, job: dict) -> dict:
        return self.stored_job(job).get("status") or {}

    def conditions(self, job: dict) -> list[tuple[str, str, str]]:
        return [
            (c["type"], c["status"], c.get("reason", ""))
            for c in self.status(job).get("conditions") or []
        ]


@pytest.fixture
def harness() -> Harness:
    return Harness()


@pytest.fixture
def make_harness():
    return Harness


@pytest.fixture
def tfu():
    """The builders above, for test modules (conftest is not importable in importlib mode)."""
    import types

    return types.SimpleNamespace(
        new_tfjob=new_tfjob,
        new_pod=new_pod,
        new_service=new_service,
        owner_ref=owner_ref,
        job_labels=job_labels,
        replica_template=replica_template,
        START=START,
        TEST_IMAGE=TEST_IMAGE,
        TEST_NAME=TEST_NAME,
    )
