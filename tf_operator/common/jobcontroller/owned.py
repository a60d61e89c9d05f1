"""Mechanics shared by the pod and service halves of :class:`JobController`.

Pods and services owned by a job are handled the same way: an informer event is traced to
the owning job through its controller reference, the replica-type label picks the
expectation key (``gen_expectation_pods_key`` or ``gen_expectation_services_key``), the
matching creation/deletion expectation is lowered and the job is enqueued. Deleting under
an expectation and claiming the objects of a job (adopt/release through a controller-ref
manager that re-reads the job live) also differ only in the kind. :class:`OwnedObjectsMixin`
holds those steps once, parameterised by the expectation key function, the control call and
the manager; :mod:`.pod` and :mod:`.service` keep the public, kind-named methods and their
kind-specific checks and logging.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from tf_operator.common.jobcontroller.index import objects_for_job
from tf_operator.common.jobcontroller.util import (
    get_controller_of,
    job_key,
    labels_of,
    meta,
    recheck_deletion_timestamp,
)
from tf_operator.k8s.labels import selector_from_set

log = logging.getLogger(__name__)

ExpectationKeyFunc = Callable[[str, str], str]
# Builds the logger for an object only when there is something to log.
LoggerFor = Callable[[dict], Any]
Manager = TypeVar("Manager")


def unwrap_tombstone(obj: Any) -> dict | None:
    """The object inside a ``DeletedFinalStateUnknown`` tombstone, or the object itself."""
    if isinstance(obj, dict):
        return obj
    inner = getattr(obj, "obj", None)
    return inner if isinstance(inner, dict) else None


class OwnedObjectsMixin:
    """Kind-independent handling of job-owned objects (uses the controller interface)."""

    def _owner_key(self, obj: dict) -> str | None:
        ref = get_controller_of(obj)
        if ref is None:
            return None
        job = self.resolve_controller_ref(meta(obj).get("namespace", ""), ref)
        return None if job is None else job_key(job)

    def _expectation_key(
        self, obj: dict, owner: str, gen_key: ExpectationKeyFunc, noun: str, logger_for: LoggerFor
    ) -> str | None:
        """The expectation key for ``obj`` under ``owner``; None (logged) without a type."""
        rtype = labels_of(obj).get(self.get_replica_type_label_key())
        if rtype is None:
            logger_for(obj).info("This %s maybe not created by %s", noun, self.controller_name())
            return None
        return gen_key(owner, rtype)

    def _observe_creation(
        self, obj: dict, owner: str, gen_key: ExpectationKeyFunc, noun: str, logger_for: LoggerFor
    ) -> None:
        exp_key = self._expectation_key(obj, owner, gen_key, noun, logger_for)
        if exp_key is not None:
            self.expectations.creation_observed(exp_key)
            self.work_queue.add(owner)

    def _observe_deletion(
        self,
        obj: Any,
        gen_key: ExpectationKeyFunc,
        noun: str,
        logger_for: LoggerFor,
        module_log: logging.Logger,
    ) -> None:
        item = unwrap_tombstone(obj)
        if item is None:
            module_log.error("couldn't get object from tombstone %r", obj)
            return
        owner = self._owner_key(item)
        if owner is None:
            return
        exp_key = self._expectation_key(item, owner, gen_key, noun, logger_for)
        if exp_key is not None:
            self.expectations.deletion_observed(exp_key)
            self.work_queue.add(owner)

    def _enqueue_owners_on_update(self, old: dict, cur: dict) -> None:
        """Enqueue the old owner when the controller ref changed, then the current one."""
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

    def _delete_expecting(
        self,
        job: Any,
        obj: dict,
        gen_key: ExpectationKeyFunc,
        delete: Callable[[str, str, Any], Any],
    ) -> bool:
        """Issue ``delete`` under a deletion expectation, undone when nothing was deleted."""
        m = meta(obj)
        rt = labels_of(obj).get(self.get_replica_type_label_key(), "")
        exp_key = gen_key(job_key(job), rt)
        self.expectations.expect_deletions(exp_key, 1)
        try:
            deleted = delete(m.get("namespace", ""), m.get("name", ""), job)
        except Exception:
            self.expectations.deletion_observed(exp_key)
            raise
        if not deleted:
            self.expectations.deletion_observed(exp_key)
        return bool(deleted)

    def _claim_for_job(
        self,
        job: Any,
        informer: Any,
        manager_type: Callable[..., Manager],
        control: Any,
        claim: Callable[[Manager, list[dict]], list[dict]],
    ) -> list[dict]:
        """Objects of ``informer`` claimed for the job; see :mod:`.index`."""
        m = meta(job)
        namespace, name, uid = m.get("namespace", ""), m.get("name", ""), m.get("uid", "")
        objects = objects_for_job(
            informer.get_indexer(),
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
        manager = manager_type(
            control,
            job,
            selector_from_set(self.gen_labels(name)),
            gvk.api_version,
            gvk.kind,
            recheck_deletion_timestamp(fresh),
        )
        return claim(manager, objects)
