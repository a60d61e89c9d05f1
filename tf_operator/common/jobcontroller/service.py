"""Reconciling the headless services of one replica type (v0.5.3 ``service.go``).

One service per index, named like its pod, selecting it by the four job labels and exposing
the kind's port. A missing service is created under a services-creation expectation (lowered
again if the create fails, divergence D3). Extra services for an index and services with an
out-of-range index are deleted (v0.5.3 only warned, divergence D21). Creation stops at the
pass's budget (divergence D38); the creates run in slow-start batches (D46).
"""

from __future__ import annotations

import logging
from functools import partial

from tf_operator.apis.common.v1.types import ReplicaSpec
from tf_operator.common.jobcontroller.context import SyncContext
from tf_operator.common.jobcontroller.expectations import ControllerExpectations
from tf_operator.common.jobcontroller.kind import Job, JobKind, owner_reference, replica_labels
from tf_operator.common.jobcontroller.owned import OwnedObjects
from tf_operator.common.jobcontroller.util import gen_general_name, job_key
from tf_operator.control.service_control import ServiceControlInterface
from tf_operator.k8s.client import is_timeout
from tf_operator.k8s.objects import meta
from tf_operator.logger import logger_for_replica

Logger = logging.Logger | logging.LoggerAdapter[logging.Logger]


class ServiceReconciler:
    """Services of one replica type per call; see the module docstring."""

    def __init__(
        self,
        kind: JobKind,
        services: OwnedObjects,
        control: ServiceControlInterface,
        expectations: ControllerExpectations,
    ) -> None:
        self._kind = kind
        self._services = services
        self._control = control
        self._expectations = expectations

    def reconcile(self, ctx: SyncContext, rtype: str, spec: ReplicaSpec) -> None:
        job, rt = ctx.job, rtype.lower()
        logger = logger_for_replica({"metadata": job.metadata}, rt)
        replicas = spec.replicas or 0
        services = self._services.of_type(ctx.services, rt)
        for service in self._services.out_of_range(services, replicas):
            logger.info("Deleting service %s: its index is out of range", meta(service)["name"])
            ctx.collect(self._services.delete, job, service)
        slices = self._services.slices(services, replicas, logger)
        for index in range(replicas):
            service_slice = slices.get(index, [])
            if len(service_slice) > 1:
                logger.warning("We have too many services for %s %d", rt, index)
                expected = gen_general_name(job.name, rt, index)
                ordered = sorted(service_slice, key=lambda s: meta(s).get("name") != expected)
                for extra in ordered[1:]:
                    ctx.collect(self._services.delete, job, extra)
            elif not service_slice and ctx.take_creation():
                logger.info("need to create new service: %s-%d", rt, index)
                ctx.creates.setdefault("services", []).append(
                    partial(self.create_new_service, job, rtype, index)
                )

    def create_new_service(self, job: Job, rtype: str, index: int) -> None:
        rt = rtype.lower()
        exp_key = self._services.expectation_key(job_key(job), rt)
        labels = replica_labels(self._kind, job.name, rt, index)
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": gen_general_name(job.name, rt, index), "labels": labels},
            "spec": {
                "clusterIP": "None",
                "selector": dict(labels),
                "ports": [
                    {"name": self._kind.default_port_name, "port": self._kind.port(job, rtype)}
                ],
            },
        }
        self._expectations.expect_creations(exp_key, 1)
        try:
            self._control.create_services_with_controller_ref(
                job.namespace, service, job, owner_reference(self._kind, job)
            )
        except Exception as err:
            if is_timeout(err):
                return
            self._expectations.creation_observed(exp_key)
            raise
