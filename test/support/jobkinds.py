"""The job kinds under test, and a sample-controller style harness for any of them.

A :class:`KindCase` builds a kind's jobs, pods and services the way its controller expects them
(container, port, labels, replica types: a "leader" type that decides, the Chief of a TFJob or
the Master of a PyTorchJob or a PaddleJob, and workers); :data:`KINDS` parametrises the generic
reconciler tests (``test/unit/common/jobcontroller``) over every kind whose jobs may have workers
alone or a leader beside them: TFJob, PyTorchJob and PaddleJob. An XGBoostJob always has a Master
and a JAXJob has only workers, so their cases (:data:`XGBOOSTJOB_CASE`, :data:`JAXJOB_CASE`) serve
their own tests (``test/unit/controller/v1/{xgboost,jax}``, ``test_v1_9_kinds_run_policy.py``).
:class:`JobHarness` wires one controller of a kind over a FakeKubeClient: objects are created in the fake API and preloaded into the
informers' indexers, which are never started; a test runs one sync and inspects the exact API
actions, events and the written status.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from support.fake_clock import FakeClock
from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.app.options import ServerOption
from tf_operator.app.server import controller_configuration
from tf_operator.common.jobcontroller.kind import InvalidJobError, JobKind, replica_type_selector
from tf_operator.controller.v1.jax import JAXJOBS, new_jax_controller
from tf_operator.controller.v1.jax.informer import InvalidJAXJobError
from tf_operator.controller.v1.jax.kind import JAXJOB_KIND
from tf_operator.controller.v1.paddle import PADDLEJOBS, new_paddle_controller
from tf_operator.controller.v1.paddle.informer import InvalidPaddleJobError
from tf_operator.controller.v1.paddle.kind import PADDLEJOB_KIND
from tf_operator.controller.v1.pytorch import PYTORCHJOBS, new_pytorch_controller
from tf_operator.controller.v1.pytorch.informer import InvalidPyTorchJobError
from tf_operator.controller.v1.pytorch.kind import PYTORCHJOB_KIND
from tf_operator.controller.v1.registry import JAXJOB, PADDLEJOB, PYTORCHJOB, TFJOB, XGBOOSTJOB
from tf_operator.controller.v1.tensorflow import TFJOBS, new_tf_controller
from tf_operator.controller.v1.tensorflow.informer import InvalidTFJobError
from tf_operator.controller.v1.tensorflow.kind import TFJOB_KIND
from tf_operator.controller.v1.xgboost import XGBOOSTJOBS, new_xgboost_controller
from tf_operator.controller.v1.xgboost.informer import InvalidXGBoostJobError
from tf_operator.controller.v1.xgboost.kind import XGBOOSTJOB_KIND
from tf_operator.k8s.client import PODS, SERVICES, Resource
from tf_operator.k8s.informers import SharedInformerFactory

TEST_IMAGE = "test-image-for-kubeflow-tf-operator:latest"
TEST_NAME = "test-tfjob"
START = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)

# The run-policy fields v0.5.3 had on a TFJob's spec, which v1.9 moved into spec.runPolicy.
RUN_POLICY_FIELDS = (
    "cleanPodPolicy",
    "ttlSecondsAfterFinished",
    "activeDeadlineSeconds",
    "backoffLimit",
)


@dataclass(frozen=True)
class KindCase:
    """One job kind as the tests build its objects."""

    name: str
    kind: JobKind[Any]
    resource: Resource
    new_controller: Callable[..., Any]
    container: str
    port_name: str
    port: int
    specs_field: str
    leader: str  # the replica type that decides (one replica)
    worker: str
    # whether v0.5.3's top-level run-policy fields exist (TFJob); else spec.runPolicy only
    top_level_run_policy: bool
    # a third type that never decides, if the kind has one (a TFJob's PS)
    other: str | None
    defaults_flag_applies: bool  # --defaults picks this kind's defaults (TFJob); else v1.9's
    framework: str  # the framework label of v1.9's job counters
    invalid_error: type[InvalidJobError]  # what the kind's decode raises
    default_restart_policy: str  # a replica's, unless its spec names one

    def __str__(self) -> str:
        return self.name

    @property
    def kind_name(self) -> str:
        return self.resource.kind

    def replica_template(self) -> dict:
        return {
            "spec": {
                "containers": [
                    {
                        "name": self.container,
                        "image": TEST_IMAGE,
                        "args": ["Fake", "Fake"],
                        "ports": [{"name": self.port_name, "containerPort": self.port}],
                    }
                ]
            }
        }

    def new_job(
        self,
        worker: int = 1,
        leader: int = 0,
        other: int = 0,
        name: str = TEST_NAME,
        namespace: str = "default",
        run_policy_in: str | None = None,
        **spec: object,
    ) -> dict:
        """A job of ``worker`` workers, ``leader`` (0 or 1) deciding replica, and ``other``
        replicas of the third type; run-policy fields go where ``run_policy_in`` says (the
        kind's only placement for a PyTorchJob, the spec for a TFJob by default)."""
        replicas = {self.worker: worker}
        if self.other is not None:
            replicas[self.other] = other
        replicas[self.leader] = min(leader, 1)
        return self.new_job_with(replicas, name, namespace, run_policy_in, **spec)

    def new_job_with(
        self,
        replicas: dict[str, int],
        name: str = TEST_NAME,
        namespace: str = "default",
        run_policy_in: str | None = None,
        **spec: object,
    ) -> dict:
        """A job of exactly these replica types and counts (a type counted 0 is left out),
        e.g. ``{"PS": 1, "Worker": 2}`` for a TFJob, ``{"Master": 1, "Worker": 2}`` for a
        PyTorchJob; the rest as :meth:`new_job`."""
        placement = run_policy_in or ("spec" if self.top_level_run_policy else "runPolicy")
        if placement == "runPolicy":
            moved = {k: spec.pop(k) for k in RUN_POLICY_FIELDS if k in spec}
            if moved:
                spec["runPolicy"] = {**dict(spec.get("runPolicy") or {}), **moved}
        specs = {
            rtype: {"replicas": count, "template": self.replica_template()}
            for rtype, count in replicas.items()
            if count > 0
        }
        return {
            "apiVersion": self.resource.api_version,
            "kind": self.kind_name,
            "metadata": {"name": name, "namespace": namespace},
            "spec": {self.specs_field: specs, **spec},
        }

    def owner_ref(self, job: dict) -> dict:
        return {
            "apiVersion": self.resource.api_version,
            "kind": self.kind_name,
            "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }

    def job_labels(self, job: dict) -> dict:
        labels = self.kind.labels
        return {
            labels.group_name: labels.group_name_value,
            labels.job_name: job["metadata"]["name"],
        }

    def replica_labels(self, job: dict, rt: str, index: int) -> dict:
        labels = self.kind.labels
        return {**self.job_labels(job), labels.replica_type: rt, labels.replica_index: str(index)}

    def new_pod(
        self, job: dict, rt: str, index: int, phase: str = "Pending", name: str | None = None
    ) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name or f"{job['metadata']['name']}-{rt}-{index}",
                "namespace": job["metadata"]["namespace"],
                "labels": self.replica_labels(job, rt, index),
                "ownerReferences": [self.owner_ref(job)],
            },
            "spec": {"containers": [{"name": self.container, "image": TEST_IMAGE}]},
            "status": {"phase": phase},
        }

    def replica_status(self, job_name: str, rtype: str, **counts: int) -> dict:
        """``status.replicaStatuses[rtype]`` as the kind writes it: the counts given, and, for a
        kind that writes one (PyTorchJob, as v1.9), the selector of the type's pods."""
        status: dict = dict(counts)
        if self.kind.writes_replica_selector:
            status["selector"] = replica_type_selector(self.kind, job_name, rtype.lower())
        return status

    def new_service(self, job: dict, rt: str, index: int, name: str | None = None) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": name or f"{job['metadata']['name']}-{rt}-{index}",
                "namespace": job["metadata"]["namespace"],
                "labels": self.replica_labels(job, rt, index),
                "ownerReferences": [self.owner_ref(job)],
            },
            "spec": {"clusterIP": "None"},
        }


TFJOB_CASE = KindCase(
    name="tfjob",
    kind=TFJOB_KIND,
    resource=TFJOBS,
    new_controller=new_tf_controller,
    container="tensorflow",
    port_name="tfjob-port",
    port=2222,
    specs_field="tfReplicaSpecs",
    leader="Chief",
    worker="Worker",
    top_level_run_policy=True,
    other="PS",
    defaults_flag_applies=True,
    framework="tensorflow",
    invalid_error=InvalidTFJobError,
    default_restart_policy="Never",
)
PYTORCHJOB_CASE = KindCase(
    name="pytorchjob",
    kind=PYTORCHJOB_KIND,
    resource=PYTORCHJOBS,
    new_controller=new_pytorch_controller,
    container="pytorch",
    port_name="pytorchjob-port",
    port=23456,
    specs_field="pytorchReplicaSpecs",
    leader="Master",
    worker="Worker",
    top_level_run_policy=False,
    other=None,
    defaults_flag_applies=False,
    framework="pytorch",
    invalid_error=InvalidPyTorchJobError,
    default_restart_policy="OnFailure",
)
PADDLEJOB_CASE = KindCase(
    name="paddlejob",
    kind=PADDLEJOB_KIND,
    resource=PADDLEJOBS,
    new_controller=new_paddle_controller,
    container="paddle",
    port_name="master",
    port=36543,
    specs_field="paddleReplicaSpecs",
    leader="Master",
    worker="Worker",
    top_level_run_policy=False,
    other=None,
    defaults_flag_applies=False,
    framework="paddle",
    invalid_error=InvalidPaddleJobError,
    default_restart_policy="OnFailure",
)
XGBOOSTJOB_CASE = KindCase(
    name="xgboostjob",
    kind=XGBOOSTJOB_KIND,
    resource=XGBOOSTJOBS,
    new_controller=new_xgboost_controller,
    container="xgboost",
    port_name="xgboostjob-port",
    port=9999,
    specs_field="xgbReplicaSpecs",
    leader="Master",
    worker="Worker",
    top_level_run_policy=False,
    other=None,
    defaults_flag_applies=False,
    framework="xgboost",
    invalid_error=InvalidXGBoostJobError,
    default_restart_policy="Never",
)
JAXJOB_CASE = KindCase(
    name="jaxjob",
    kind=JAXJOB_KIND,
    resource=JAXJOBS,
    new_controller=new_jax_controller,
    container="jax",
    port_name="jaxjob-port",
    port=6666,
    specs_field="jaxReplicaSpecs",
    leader="Worker",
    worker="Worker",
    top_level_run_policy=False,
    other=None,
    defaults_flag_applies=False,
    framework="jax",
    invalid_error=InvalidJAXJobError,
    default_restart_policy="Never",
)
KINDS = (TFJOB_CASE, PYTORCHJOB_CASE, PADDLEJOB_CASE)
# The kinds whose API types carry spec.lifecyclePolicy (docs/policies.md) with a leader replica
# beside the workers: TFJob, PyTorchJob, PaddleJob, XGBoostJob (a JAXJob has workers only).
LIFECYCLE_KINDS = (TFJOB_CASE, PYTORCHJOB_CASE, PADDLEJOB_CASE, XGBOOSTJOB_CASE)
SCHEMES = {
    TFJOB_CASE.name: TFJOB,
    PYTORCHJOB_CASE.name: PYTORCHJOB,
    PADDLEJOB_CASE.name: PADDLEJOB,
    XGBOOSTJOB_CASE.name: XGBOOSTJOB,
    JAXJOB_CASE.name: JAXJOB,
}


class JobHarness:
    """One controller of ``case``'s kind over the fake client; see the module docstring."""

    def __init__(
        self,
        case: KindCase,
        gang: bool = False,
        scheduler: str = "kube-batch",
        client: FakeKubeClient | None = None,
        pod_updates_batch_period: float | None = None,  # None: the flag's default
        defaults: str = "v0.5.3",  # --defaults
    ) -> None:
        self.case = case
        self.client = client or FakeKubeClient()
        self.clock = FakeClock(start=START)
        self.factory = SharedInformerFactory(self.client, 0)
        self.job_informer = self.factory.for_resource(case.resource)
        self.recorder = FakeRecorder()
        options = ServerOption(
            enable_gang_scheduling=gang, gang_scheduler_name=scheduler, defaults=defaults
        )
        if pod_updates_batch_period is not None:
            options.pod_updates_batch_period = pod_updates_batch_period
        config = SCHEMES[case.name].configuration(controller_configuration(options))
        self.ctr = case.new_controller(
            self.client, self.factory, self.job_informer, self.recorder, config, self.clock
        )
        self.ctr.create_batches.concurrent = False  # exact action order
        self.pod_informer = self.factory.pods()
        self.service_informer = self.factory.services()

    # ---- preloading ----

    def add_job(self, job: dict, status: dict | None = None) -> dict:
        resource = self.client.resource(self.case.resource)
        stored = resource.create(copy.deepcopy(job), namespace="default")
        if status is not None:
            stored["status"] = status
            stored = resource.update_status(stored, namespace="default")
        self.job_informer.get_indexer().add(stored)
        self.client.clear_actions()
        return stored

    def cache_job(self, job: dict) -> None:
        """Put a (possibly changed) job into the cache only."""
        self.job_informer.get_indexer().update(job)

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
                pod = self.case.new_pod(job, rt, index, phase)
                if phase == "Running" and restart_counts is not None:
                    pod["status"]["containerStatuses"] = [
                        {"name": self.case.container, "restartCount": restart_counts[i]}
                    ]
                self.add_pod(pod)
                index += 1

    def add_services(self, job: dict, rt: str, count: int) -> None:
        for i in range(count):
            self.add_service(self.case.new_service(job, rt, i))

    # ---- running and inspecting ----

    def decoded(self, job: dict) -> Any:
        """The job as the controller decodes it from the cache (defaults applied)."""
        kind = self.case.kind
        decoded = kind.decode(self.job_informer.get_indexer().get(job), self.ctr.config.defaults)
        kind.set_defaults(decoded)
        return decoded

    def sync(self, job: dict) -> bool:
        return bool(self.ctr.sync(f"{job['metadata']['namespace']}/{job['metadata']['name']}"))

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
        resource = self.client.resource(self.case.resource)
        return resource.get(job["metadata"]["name"], namespace="default")

    def status(self, job: dict) -> dict:
        return self.stored_job(job).get("status") or {}

    def conditions(self, job: dict) -> list[tuple[str, str, str]]:
        return [
            (c["type"], c["status"], c.get("reason", ""))
            for c in self.status(job).get("conditions") or []
        ]
