"""The framework-independent job controller (v0.5.3 ``pkg/common/jobcontroller``).

A concrete controller (TFJob today; PyTorch or MPI could follow) subclasses
:class:`JobController` and implements :class:`ControllerInterface`: its name, API
group/version/kind, label keys, how to read a job from the informer cache and live from the
API, and its default container name and port name. In exchange it gets:

* the work queue (rate limited, named after the resource), expectations and event recorder;
* pod, service and PodGroup control;
* pod and service informer handlers that observe expectations and enqueue the owning job
  (:mod:`.pod`, :mod:`.service`);
* claiming of pods and services through the controller-ref managers, and deletion of pods
  and services under deletion expectations;
* names, labels and owner references of generated objects;
* the backoff and deadline checks shared by all job kinds (:mod:`.limits`).

Concurrency: informer handlers run on informer threads, reconciles on worker threads. The
queue never hands one key to two workers; expectations are thread-safe; nothing else here is
mutable after construction.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from tf_operator.common.jobcontroller.expectations import ControllerExpectations
from tf_operator.common.jobcontroller.index import add_job_indexers
from tf_operator.common.jobcontroller.pod import PodEventsMixin
from tf_operator.common.jobcontroller.service import ServiceEventsMixin
from tf_operator.common.jobcontroller.util import group_of, meta
from tf_operator.control.pod_control import PodControl, PodControlInterface
from tf_operator.control.podgroup_control import PodGroupControl, backend_for
from tf_operator.control.service_control import ServiceControl, ServiceControlInterface
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.listers import Lister
from tf_operator.k8s.workqueue import default_controller_rate_limiter, new_rate_limiting_queue

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass
class JobControllerConfiguration:
    """Settings of the shared controller (v0.5.3's ReconcilerSyncLoopPeriod was never used)."""

    enable_gang_scheduling: bool = False
    gang_scheduler_name: str = "kube-batch"


class ControllerInterface(ABC):
    """What a job kind tells the shared controller about itself."""

    @abstractmethod
    def controller_name(self) -> str: ...

    @abstractmethod
    def get_api_group_version_kind(self) -> GroupVersionKind: ...

    @abstractmethod
    def get_group_name_label_key(self) -> str: ...

    @abstractmethod
    def get_job_name_label_key(self) -> str: ...

    @abstractmethod
    def get_group_name_label_value(self) -> str: ...

    @abstractmethod
    def get_replica_type_label_key(self) -> str: ...

    @abstractmethod
    def get_replica_index_label_key(self) -> str: ...

    @abstractmethod
    def get_job_role_key(self) -> str: ...

    @abstractmethod
    def get_job_from_informer_cache(self, namespace: str, name: str) -> Any | None:
        """The decoded job from the cache; None when absent or not decodable."""

    @abstractmethod
    def get_job_from_api_client(self, namespace: str, name: str) -> Any:
        """The job read live from the API server (raises the API error)."""

    @abstractmethod
    def update_job_status(self, job: Any) -> Any:
        """Write the job's status through the status subresource."""

    @abstractmethod
    def get_default_container_name(self) -> str: ...

    @abstractmethod
    def get_default_container_port_name(self) -> str: ...


class JobController(PodEventsMixin, ServiceEventsMixin, ControllerInterface):
    """Shared state and helpers of a job controller; see the module docstring."""

    def __init__(
        self,
        kube_client: Any,
        informer_factory: Any,
        recorder: Any,
        config: JobControllerConfiguration,
        work_queue_name: str,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.kube_client = kube_client
        self.config = config
        self.clock = clock
        self.recorder = recorder
        self.pod_control: PodControlInterface = PodControl(kube_client, recorder)
        self.service_control: ServiceControlInterface = ServiceControl(kube_client, recorder)
        self.pod_group_control = PodGroupControl(
            kube_client, recorder, backend_for(config.gang_scheduler_name)
        )
        self.expectations = ControllerExpectations(clock)
        self.work_queue = new_rate_limiting_queue(
            default_controller_rate_limiter(), name=work_queue_name, clock=clock
        )
        self.pod_informer = informer_factory.pods()
        self.service_informer = informer_factory.services()
        add_job_indexers(self.pod_informer, self.get_job_name_label_key())
        add_job_indexers(self.service_informer, self.get_job_name_label_key())
        self.pod_lister = Lister(self.pod_informer.get_indexer())
        self.service_lister = Lister(self.service_informer.get_indexer())
        self.pod_informer_synced = self.pod_informer.has_synced
        self.service_informer_synced = self.service_informer.has_synced
        self.pod_informer.add_event_handler(self._pod_event_handler())
        self.service_informer.add_event_handler(self._service_event_handler())

    # ---- generated metadata ----------------------------------------------------------------

    def gen_owner_reference(self, job: Any) -> dict:
        gvk = self.get_api_group_version_kind()
        m = meta(job)
        return {
            "apiVersion": gvk.api_version,
            "kind": gvk.kind,
            "name": m.get("name", ""),
            "uid": m.get("uid", ""),
            "controller": True,
            "blockOwnerDeletion": True,
        }

    def gen_labels(self, job_name: str) -> dict[str, str]:
        return {
            self.get_group_name_label_key(): self.get_group_name_label_value(),
            self.get_job_name_label_key(): job_name.replace("/", "-"),
        }

    # ---- owner resolution ------------------------------------------------------------------

    def resolve_controller_ref(self, namespace: str, controller_ref: dict) -> Any | None:
        """The cached job a controller ref points at, if it is ours and still the same job.

        v0.5.3 compared only the kind; the API group is compared too (spec §10 #27).
        """
        gvk = self.get_api_group_version_kind()
        if controller_ref.get("kind") != gvk.kind:
            return None
        if group_of(controller_ref.get("apiVersion", "")) != gvk.group:
            return None
        job = self.get_job_from_informer_cache(namespace, controller_ref.get("name", ""))
        if job is None or meta(job).get("uid") != controller_ref.get("uid"):
            return None
        return job

    # ---- gang scheduling -------------------------------------------------------------------

    def sync_pod_group(self, job: Any, min_member: int) -> dict:
        return self.pod_group_control.sync_pod_group(job, min_member, self.gen_owner_reference(job))

    def delete_pod_group(self, job: Any) -> None:
        self.pod_group_control.delete_pod_group(job)
