"""Services of a job: informer handlers, claiming, and slicing by replica type and index.

v0.5.3 observed only service additions; its update and delete handlers were empty, so a
deleted service came back only at the next TFJob resync. Here updates enqueue the owner like
pod updates do, and deletions lower the service-deletion expectation and enqueue the owner
(spec §10 #4). Adoption re-reads the job live from the API, as for pods (spec §10 #26).

The handlers, deletion and claiming share their mechanics with pods through :mod:`.owned`;
only the service-specific checks stay here.
"""

from __future__ import annotations

import logging
from typing import Any

from tf_operator.common.jobcontroller.owned import OwnedObjectsMixin
from tf_operator.common.jobcontroller.pod import slice_by_index
from tf_operator.common.jobcontroller.util import (
    gen_expectation_services_key,
    get_controller_of,
    labels_of,
    meta,
)
from tf_operator.control.service_ref_manager import ServiceControllerRefManager
from tf_operator.k8s.cache import ResourceEventHandlerFuncs

log = logging.getLogger(__name__)


def _service_logger(_service: dict) -> logging.Logger:
    return log


class ServiceEventsMixin(OwnedObjectsMixin):
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
        self._observe_creation(
            service, key, gen_expectation_services_key, "service", _service_logger
        )

    def update_service(self, old: dict, cur: dict) -> None:
        self._enqueue_owners_on_update(old, cur)

    def delete_service(self, obj: Any) -> None:
        self._observe_deletion(obj, gen_expectation_services_key, "service", _service_logger, log)

    def delete_service_expecting(self, job: Any, service: dict) -> bool:
        """Delete a service under a deletion expectation; True when a delete was issued."""
        return self._delete_expecting(
            job, service, gen_expectation_services_key, self.service_control.delete_service
        )

    def get_services_for_job(self, job: Any) -> list[dict]:
        """Services claimed for the job (adopting/releasing as needed); see :mod:`.index`."""
        return self._claim_for_job(
            job,
            self.service_informer,
            ServiceControllerRefManager,
            self.service_control,
            ServiceControllerRefManager.claim_services,
        )

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
