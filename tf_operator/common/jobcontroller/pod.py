"""Pods of a job: informer handlers, claiming, deletion, slicing by replica type and index.

Handlers (v0.5.3 ``AddPod``/``UpdatePod``/``DeletePod``):

* add: a pod controlled by a known job lowers that job's pod-creation expectation for the
  pod's replica type and enqueues the job; orphans are left to the next claim;
* update: a changed controller ref enqueues the old owner, and the current owner is enqueued;
* delete (tombstones unwrapped): lowers the pod-deletion expectation and enqueues the owner.

The mechanics shared with services live in :mod:`.owned`; this module keeps the pod-only
checks and logging, and the index slicing helpers that services reuse.
"""

from __future__ import annotations

import logging
from typing import Any

from tf_operator.common.jobcontroller.owned import OwnedObjectsMixin, unwrap_tombstone
from tf_operator.common.jobcontroller.util import (
    gen_expectation_pods_key,
    get_controller_of,
    labels_of,
)
from tf_operator.control.controller_ref_manager import PodControllerRefManager
from tf_operator.k8s.cache import ResourceEventHandlerFuncs
from tf_operator.logger import logger_for_pod

log = logging.getLogger(__name__)

__all__ = ["PodEventsMixin", "out_of_range", "parse_index", "slice_by_index", "unwrap_tombstone"]


class PodEventsMixin(OwnedObjectsMixin):
    """Pod handling of :class:`JobController` (uses its controller interface and state)."""

    def _pod_event_handler(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(self.add_pod, self.update_pod, self.delete_pod)

    def _pod_logger(self, pod: dict) -> Any:
        return logger_for_pod(pod, self.get_api_group_version_kind().kind)

    def add_pod(self, pod: dict, is_in_initial_list: bool = False) -> None:
        # A pod first seen while already terminating (a relist can fold its create and its
        # delete together) still proves the create happened: lower the creation expectation
        # below, or the job would wait for the expectations TTL. client-go's ReplicaSet
        # controller skips it here; pod names are deterministic, so counting it is safe.
        if get_controller_of(pod) is None:
            return
        key = self._owner_key(pod)
        if key is None:
            if labels_of(pod).get(self.get_group_name_label_key()) == (
                self.get_group_name_label_value()
            ):
                self._pod_logger(pod).info("This pod's job does not exist")
            return
        self._observe_creation(pod, key, gen_expectation_pods_key, "pod", self._pod_logger)

    def update_pod(self, old: dict, cur: dict) -> None:
        self._enqueue_owners_on_update(old, cur)

    def delete_pod(self, obj: Any) -> None:
        self._observe_deletion(obj, gen_expectation_pods_key, "pod", self._pod_logger, log)

    def delete_pod_expecting(self, job: Any, pod: dict) -> bool:
        """Delete a pod under a deletion expectation; True when a delete was issued."""
        return self._delete_expecting(
            job, pod, gen_expectation_pods_key, self.pod_control.delete_pod
        )

    # ---- claiming and slicing --------------------------------------------------------------

    def get_pods_for_job(self, job: Any) -> list[dict]:
        """Pods claimed for the job (adopting/releasing as needed); see :mod:`.index`."""
        return self._claim_for_job(
            job,
            self.pod_informer,
            PodControllerRefManager,
            self.pod_control,
            PodControllerRefManager.claim_pods,
        )

    def filter_pods_for_replica_type(self, pods: list[dict], replica_type: str) -> list[dict]:
        label = self.get_replica_type_label_key()
        return [p for p in pods if labels_of(p).get(label) == replica_type]

    def get_pod_slices(
        self, pods: list[dict], replicas: int, logger: Any = log
    ) -> list[list[dict]]:
        """Pods grouped by their index label; unlabelled or out-of-range pods are skipped."""
        return slice_by_index(pods, replicas, self.get_replica_index_label_key(), "pod", logger)


def parse_index(obj: dict, index_label: str) -> int | None:
    """The replica index of an object, or None when the label is missing or not a number."""
    value = labels_of(obj).get(index_label)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def slice_by_index(
    objects: list[dict], replicas: int, index_label: str, noun: str, logger: Any
) -> list[list[dict]]:
    slices: list[list[dict]] = [[] for _ in range(max(replicas, 0))]
    for obj in objects:
        value = labels_of(obj).get(index_label)
        if value is None:
            logger.warning("The %s do not have the index label.", noun)
            continue
        index = parse_index(obj, index_label)
        if index is None:
            logger.warning("Error when parsing the index label %r of a %s", value, noun)
            continue
        if index < 0 or index >= replicas:
            logger.warning("The label index is not expected: %d", index)
            continue
        slices[index].append(obj)
    return slices


def out_of_range(objects: list[dict], replicas: int, index_label: str) -> list[dict]:
    """Objects whose index label is a number outside ``[0, replicas)`` (e.g. after scale-down)."""
    result = []
    for obj in objects:
        index = parse_index(obj, index_label)
        if index is not None and (index < 0 or index >= replicas):
            result.append(obj)
    return result
