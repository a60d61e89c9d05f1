"""Pods of a job: informer handlers, claiming, deletion, slicing by replica type and index.

Handlers (v0.5.3 ``AddPod``/``UpdatePod``/``DeletePod``):

* add: a pod controlled by a known job lowers that job's pod-creation expectation for the
  pod's replica type and enqueues the job; orphans are left to the next claim;
* update: a changed controller ref enqueues the old owner, and the current owner is enqueued;
* delete (tombstones unwrapped): lowers the pod-deletion expectation and enqueues the owner.
"""

from __future__ import annotations

import logging
from typing import Any

from tf_operator.common.jobcontroller.index import objects_for_job
from tf_operator.common.jobcontroller.util import (
    gen_expectation_pods_key,
    get_controller_of,
    job_key,
    labels_of,
    meta,
    recheck_deletion_timestamp,
)
from tf_operator.control.controller_ref_manager import PodControllerRefManager
from tf_operator.k8s.cache import ResourceEventHandlerFuncs
from tf_operator.k8s.labels import selector_from_set
from tf_operator.logger import logger_for_pod

log = logging.getLogger(__name__)


def unwrap_tombstone(obj: Any) -> dict | None:
    """The object inside a ``DeletedFinalStateUnknown`` tombstone, or the object itself."""
    if isinstance(obj, dict):
        return obj
    inner = getattr(obj, "obj", None)
    return inner if isinstance(inner, dict) else None


class PodEventsMixin:
    """Pod handling of :class:`JobController` (uses its controller interface and state)."""

    def _pod_event_handler(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(self.add_pod, self.update_pod, self.delete_pod)

    def _owner_key(self, obj: dict) -> str | None:
        ref = get_controller_of(obj)
        if ref is None:
            return None
        job = self.resolve_controller_ref(meta(obj).get("namespace", ""), ref)
        return None if job is None else job_key(job)

    def add_pod(self, pod: dict, is_in_initial_list: bool = False) -> None:
        # A pod first seen while already terminating (a relist can fold its create and its
        # delete together) still proves the create happened: lower the creation expectation
        # below, or the job would wait for the expectations TTL. client-go's ReplicaSet
        # controller skips it here; pod names are deterministic, so counting it is safe.
        if get_controller_of(pod) is None:
            return
        logger = logger_for_pod(pod, self.get_api_group_version_kind().kind)
        key = self._owner_key(pod)
        if key is None:
            if labels_of(pod).get(self.get_group_name_label_key()) == (
                self.get_group_name_label_value()
            ):
                logger.info("This pod's job does not exist")
            return
        rtype = labels_of(pod).get(self.get_replica_type_label_key())
        if rtype is None:
            logger.info("This pod maybe not created by %s", self.controller_name())
            return
        self.expectations.creation_observed(gen_expectation_pods_key(key, rtype))
        self.work_queue.add(key)

    def update_pod(self, old: dict, cur: dict) -> None:
        if meta(cur).get("resourceVersion") == meta(old).get("resourceVersion"):
            return  # a periodic resync: nothing changed
        cur_ref, old_ref = get_controller_of(cur), get_controller_of(old)
        if cur_ref != old_ref and old_ref is not None:
            old_key = self._owner_key(old)
            if old_key is not None:
                self.work_queue.add(old_key)
        if cur_ref is not None:
            key = self._owner_key(cur)
            if key is not None:
                self.work_queue.add(key)

    def delete_pod(self, obj: Any) -> None:
        pod = unwrap_tombstone(obj)
        if pod is None:
            log.error("couldn't get object from tombstone %r", obj)
            return
        key = self._owner_key(pod)
        if key is None:
            return
        rtype = labels_of(pod).get(self.get_replica_type_label_key())
        if rtype is None:
            logger_for_pod(pod, self.get_api_group_version_kind().kind).info(
                "This pod maybe not created by %s", self.controller_name()
            )
            return
        self.expectations.deletion_observed(gen_expectation_pods_key(key, rtype))
        self.work_queue.add(key)

    def delete_pod_expecting(self, job: Any, pod: dict) -> bool:
        """Delete a pod under a deletion expectation; True when a delete was issued."""
        m = meta(pod)
        rt = labels_of(pod).get(self.get_replica_type_label_key(), "")
        exp_key = gen_expectation_pods_key(job_key(job), rt)
        self.expectations.expect_deletions(exp_key, 1)
        try:
            deleted = self.pod_control.delete_pod(m.get("namespace", ""), m.get("name", ""), job)
        except Exception:
            self.expectations.deletion_observed(exp_key)
            raise
        if not deleted:
            self.expectations.deletion_observed(exp_key)
        return bool(deleted)

    # ---- claiming and slicing --------------------------------------------------------------

    def get_pods_for_job(self, job: Any) -> list[dict]:
        """Pods claimed for the job (adopting/releasing as needed); see :mod:`.index`."""
        m = meta(job)
        namespace, name, uid = m.get("namespace", ""), m.get("name", ""), m.get("uid", "")
        pods = objects_for_job(
            self.pod_informer.get_indexer(),
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
        manager = PodControllerRefManager(
            self.pod_control,
            job,
            selector_from_set(self.gen_labels(name)),
            gvk.api_version,
            gvk.kind,
            recheck_deletion_timestamp(fresh),
        )
        return manager.claim_pods(pods)

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
