"""Reconciling the headless services of one replica type (v0.5.3 ``service.go``).

One service per index, named like its pod, selecting it by v0.5.3's four job labels and
exposing the kind's port; it carries training-operator v1.9's ``training.kubeflow.org/*``
labels too, as its pod does (D63). A missing service is created under a services-creation expectation (lowered
again if the create fails, divergence D3). Extra services for an index and services with an
out-of-range index are deleted (v0.5.3 only warned, divergence D21). Creation stops at the
pass's budget (divergence D38); the creates run in slow-start batches (D46).
"""

from __future__ import annotations

from typing import Generic

from tf_operator.apis.common.v1.types import ReplicaSpec
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.kind import (
    J,
    JobKind,
    owner_reference,
    replica_labels,
    replica_selector,
)
from tf_operator.common.jobcontroller.owned import OwnedObjects
from tf_operator.common.jobcontroller.startup import publishes_not_ready_addresses
from tf_operator.common.jobcontroller.util import gen_general_name
from tf_operator.control.service_control import ServiceControlInterface
from tf_operator.logger import logger_for_replica


class ServiceReconciler(Generic[J]):
    """Services of one replica type per call; see the module docstring."""

    def __init__(
        self, kind: JobKind[J], services: OwnedObjects[J], control: ServiceControlInterface
    ) -> None:
        self._kind = kind
        self._services = services
        self._control = control

    def reconcile(self, ctx: SyncContext[J], rtype: str, spec: ReplicaSpec) -> None:
        job, rt = ctx.job, rtype.lower()
        logger = logger_for_replica({"metadata": job.metadata}, rt, self._kind.resource.kind)

        def create(index: int) -> None:
            self.create_new_service(job, rtype, index)

        replicas = spec.replicas or 0
        self._services.reconcile_indices(ctx, ctx.services, rt, replicas, logger, create)

    def create_new_service(self, job: J, rtype: str, index: int) -> None:
        rt = rtype.lower()
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": gen_general_name(job.name, rt, index),
                "labels": replica_labels(self._kind, job.name, rt, index),
            },
            "spec": {
                "clusterIP": "None",
                "selector": replica_selector(self._kind, job.name, rt, index),
                "ports": [
                    {"name": self._kind.default_port_name, "port": self._kind.port(job, rtype)}
                ],
            },
        }
        if publishes_not_ready_addresses(job):  # peer names before the pods are ready (D105)
            spec = service["spec"]
            assert isinstance(spec, dict)
            spec["publishNotReadyAddresses"] = True
        self._control.create_services_with_controller_ref(
            job.namespace, service, job, owner_reference(self._kind, job)
        )
