"""Reconciling the headless services of one replica type (spec §3.6, §5.6b).

One service per index, named like its pod, selecting it by the four operator labels and
exposing the ``tfjob-port``. A missing service is created under a services-creation
expectation (lowered again if the create fails, spec §10 #3). Extra services for an index and
services with an out-of-range index are deleted (v0.5.3 only warned, spec §10 #22).
"""

from __future__ import annotations

from tf_operator.apis.common.v1.types import ReplicaSpec
from tf_operator.apis.tensorflow.v1.constants import DEFAULT_PORT_NAME
from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.common.jobcontroller.pod import out_of_range
from tf_operator.common.jobcontroller.util import (
    gen_expectation_services_key,
    gen_general_name,
    job_key,
    meta,
)
from tf_operator.controller.v1.tensorflow.context import ReconcileContext
from tf_operator.controller.v1.tensorflow.tensorflow import get_port_from_tfjob
from tf_operator.k8s.client import is_timeout
from tf_operator.logger import logger_for_replica


class ServiceReconcilerMixin:
    """Service reconciliation of :class:`TFController`."""

    def reconcile_services(
        self,
        ctx: ReconcileContext,
        job: TFJob,
        services: list[dict],
        rtype: str,
        spec: ReplicaSpec,
    ) -> None:
        rt = rtype.lower()
        logger = logger_for_replica({"metadata": job.metadata}, rt)
        replicas = spec.replicas or 0
        services = self.filter_services_for_replica_type(services, rt)
        for service in out_of_range(services, replicas, self.get_replica_index_label_key()):
            logger.info("Deleting service %s: its index is out of range", meta(service)["name"])
            self._collect(ctx, self.delete_service_expecting, job, service)
        for index, service_slice in enumerate(self.get_service_slices(services, replicas, logger)):
            if len(service_slice) > 1:
                logger.warning("We have too many services for %s %d", rt, index)
                ordered = sorted(
                    service_slice,
                    key=lambda s: meta(s).get("name") != gen_general_name(job.name, rt, index),
                )
                for extra in ordered[1:]:
                    self._collect(ctx, self.delete_service_expecting, job, extra)
            elif not service_slice:
                logger.info("need to create new service: %s-%d", rt, index)
                self._collect(ctx, self.create_new_service, job, rtype, str(index), spec)

    def create_new_service(self, job: TFJob, rtype: str, index: str, spec: ReplicaSpec) -> None:
        rt = rtype.lower()
        exp_key = gen_expectation_services_key(job_key(job), rt)
        labels = self.gen_labels(job.name)
        labels[self.get_replica_type_label_key()] = rt
        labels[self.get_replica_index_label_key()] = index
        port = get_port_from_tfjob(job, rtype)
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": gen_general_name(job.name, rt, index), "labels": labels},
            "spec": {
                "clusterIP": "None",
                "selector": dict(labels),
                "ports": [{"name": DEFAULT_PORT_NAME, "port": port}],
            },
        }
        self.expectations.expect_creations(exp_key, 1)
        try:
            self.service_control.create_services_with_controller_ref(
                job.namespace, service, job, self.gen_owner_reference(job)
            )
        except Exception as err:
            if is_timeout(err):
                return
            self.expectations.creation_observed(exp_key)
            raise
