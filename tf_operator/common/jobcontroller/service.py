"""Services of a job: informer handlers, claiming, and slicing by replica type and index.

v0.5.3 observed only service additions; its update and delete handlers were empty, so a
deleted service came back only at the next TFJob resync. Here updates enqueue the owner like
pod updates do, and deletions lower the service-deletion expectation and enqueue the owner
(spec §10 #4). Adoption re-reads the job live from the API, as for pods (spec §10 #26).
"""

from __future__ import annotations

import logging
from typing import Any

from tf_operator.common.jobcontroller.index import objects_for_job
from tf_operator.common.jobcontroller.pod import slice_by_index, unwrap_tombstone
from tf_operator.common.jobcontroller.util import (
    gen_expectation_services_key,
    get_controller_of,
    job_key,
    labels_of,
    meta,
    recheck_deletion_timestamp,
)
from tf_operator.control.service_ref_manager import ServiceControllerRefManager
from tf_operator.k8s.cache import ResourceEventHandlerFuncs
from tf_operator.k8s.labels import selector_from_set

log = logging.getLogger(__name__)


class ServiceEventsMixin:
    """Service handling of :class:`JobController`."""

    def _service_event_handler(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(self.add_service, self.update_service, self.delete_service)

    def add_service(self, service: dict, is_in_initial_list: bool = False) -> None:
        if meta(service).get("deletionTimestamp"):
            return
        if get_controller_of(service) is None:
            return
        key = self._owner_key(service)
        if key is None:
            return
        rtype = labels_of(service).get(self.get_replica_type_label_key())
        if rtype is None:
            log.info("This service maybe not created by %s", self.controller_name())
            return
        self.expectations.creation_observed(gen_expectation_services_key(key, rtype))
        self.work_queue.add(key)

    def update_service(self, old: dict, cur: dict) -> None:
        if meta(cur).get("resourceVersion") == meta(old).get("resourceVersion"):
            return
        cur_ref, old_ref = get_controller_of(cur), get_controller_of(old)
        if cur_ref != old_ref and old_ref is not None:
            old_key = self._owner_key(old)
            if old_key is not None:
                self.work_queue.add(old_key)
        if cur_ref is not None:
            key = self._owner_key(cur)
            if key is not None:
                self.work_queue.add(key)

    def delete_service(self, obj: Any) -> None:
        service = unwrap_tombstone(obj)
        if service is None:
            log.error("couldn't get object from tombstone %r", obj)
            return
        key = self._owner_key(service)
        if key is None:
            return
        rtype = labels_of(service).get(self.get_replica_type_label_key())
        if rtype is None:
            log.info("This service maybe not created by %s", self.controller_name())
            return
        self.expectations.deletion_observed(gen_expectation_services_key(key, rtype))
        self.work_queue.add(key)

    def delete_service_expecting(self, job: Any, service: dict) -> bool:
        """Delete a service under a deletion expectation; True when a delete was issued."""
        m = meta(service)
        rt = labels_of(service).get(self.get_replica_type_label_key(), "")
        exp_key = gen_expectation_services_key(job_key(job), rt)
        self.expectations.expect_deletions(exp_key, 1)
        try:
            deleted = self.service_control.delete_service(
                m.get("namespace", ""), m.get("name", ""), job
            )
        except Exception:
            self.expectations.deletion_observed(exp_key)
            raise
        if not deleted:
            self.expectations.deletion_observed(exp_key)
        return bool(deleted)

    def get_services_for_job(self, job: Any) -> list[dict]:
        """Services claimed for the job (adopting/releasing as needed); see :mod:`.index`."""
        m = meta(job)
        namespace, name, uid = m.get("namespace", ""), m.get("name", ""), m.get("uid", "")
        services = objects_for_job(
            self.service_informer.get_indexer(),
            self.get_job_name_label_key(),
            namespace,
            self.gen_labels(name)[self.get_job_name_label_key()],
            uid,
        )

        def fresh() -> Any:
            live = self.get_job_from_api_client(namespace, name)
            if meta(live).get("uid") != uid:
                raise RuntimeError(
                    f"original Job {namespace}/{name} is gone: got uid "
                    f"{meta(live).get('uid')}, wanted {uid}"
                )
            return live

        gvk = self.get_api_group_version_kind()
        manager = ServiceControllerRefManager(
            self.service_control,
            job,
            selector_from_set(self.gen_labels(name)),
            gvk.api_version,
            gvk.kind,
            recheck_deletion_timestamp(fresh),
        )
        return manager.claim_services(services)

    def filter_services_for_replica_type(
        self, services: list[dict], replica_type: str
    ) -> list[dict]:
        label = self.get_replica_type_label_key()
        return [s for s in services if labels_of(s).get(label) == replica_type]

    def get_service_slices(
        self, services: list[dict], replicas: int, logger: Any = log
    ) -> list[list[dict]]:
        return slice_by_index(
            services, replicas, self.get_replica_index_label_key(), "service", logger
        )
