"""The objects a job owns (pods, services): informer handlers, claiming, deletion, slicing.

One :class:`OwnedObjects` class serves pods and services; an :class:`OwnedType` names what
differs. Handlers (v0.5.3 ``AddPod``/``UpdatePod``/``DeletePod`` and, unlike v0.5.3, service
updates and deletions, D4) trace an object to its job through its controller reference, reading
only the cached job's metadata (a ``ControllerRefResolver`` matching the API group too, D7,
D26), lower the expectation of the
object's replica type and enqueue the job, except for updates of the objects of a job this
process saw finish, which no pass has work for (D54). ``claim`` adopts and releases through the
controller-ref managers, looking only at the job's own objects (:mod:`.index`).
``reconcile_indices`` keeps one object per replica index (D21) and queues the missing ones for
creation within the pass's budget (D38). Creates and deletes run under an expectation (D3,
D4): a create's is raised when it is queued, so no pass runs while it is in flight on the
create helpers (D46), and names are deterministic, so two creates for one index can never
both succeed. Handlers run on informer threads, the rest on workers; nothing here is mutated
after construction. ``D<n>``: docs/divergences.md.

What is not a replica of this job is replaced, never counted (D67): a pod created before the
job (an earlier job of the same name, deleted with ``--cascade=orphan``, left it; batch/v1 Job
guards the same case with ``controller-uid`` in its selector) is left out of the claim and
deleted with a Warning event; an object of a replica type without a valid index label is
deleted, as the Kubernetes Job controller deletes pods without a valid completion index. The
replacement is created once the deletion is seen: no create is queued for a name an object
this job controls still holds, since that create could only meet AlreadyExists.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Generic

from tf_operator.common.jobcontroller.context import Logger, SyncContext
from tf_operator.common.jobcontroller.index import add_job_indexers, objects_for_job
from tf_operator.common.jobcontroller.kind import J, Job, JobKind, job_labels
from tf_operator.common.jobcontroller.util import gen_expectation_key, gen_general_name
from tf_operator.control.controller_ref_manager import ControllerRefManager, PodControllerRefManager
from tf_operator.control.object_control import ObjectControl
from tf_operator.control.service_ref_manager import ServiceControllerRefManager
from tf_operator.control.util import EVENT_TYPE_WARNING
from tf_operator.k8s.cache import ResourceEventHandlerFuncs, SharedIndexInformer
from tf_operator.k8s.client import ResourceInterface
from tf_operator.k8s.controller.controller_utils import (
    ControllerRefResolver,
    object_key,
    recheck_deletion_timestamp,
    unwrap_tombstone,
)
from tf_operator.k8s.controller.expectations import ControllerExpectations, ExpectedCreate
from tf_operator.k8s.labels import selector_from_set
from tf_operator.k8s.objects import Obj, get_controller_of, labels_of, meta, same_but_version
from tf_operator.k8s.workqueue import DelayingQueue
from tf_operator.logger import logger_for_pod

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OwnedType:
    """What differs between a job's pods and its services."""

    noun: str  # in log messages: "pod", "service"
    expectation_suffix: str  # the last part of the expectation key
    manager: type[ControllerRefManager]
    # v0.5.3's AddService skipped objects being deleted; AddPod counts them (see on_add).
    skip_terminating_adds: bool
    # Log pods of our group whose job is unknown (v0.5.3 did so for pods only).
    log_unknown_owner: bool
    need_to_create: str  # v0.5.3's log line for a missing object, capitalised as it wrote it
    # Objects created before their job are replaced, not claimed (D67): a pod is a run, while
    # an earlier job's service, which selects the same labels, serves the new job as well.
    replace_stale: bool = False


POD_TYPE = OwnedType(
    "pod",
    "pods",
    PodControllerRefManager,
    False,
    True,
    "Need to create new pod: %s-%d",
    replace_stale=True,
)
SERVICE_TYPE = OwnedType(
    "service",
    "services",
    ServiceControllerRefManager,
    True,
    False,
    "need to create new service: %s-%d",
)
STALE_REASON = "StalePod"
INVALID_INDEX_REASON = "InvalidReplicaIndex"


class OwnedObjects(Generic[J]):
    """One kind of object owned by jobs; see the module docstring."""

    def __init__(
        self,
        owned: OwnedType,
        kind: JobKind[J],
        informer: SharedIndexInformer,
        control: ObjectControl,
        owners: ControllerRefResolver,
        expectations: ControllerExpectations,
        queue: DelayingQueue,
        live_jobs: ResourceInterface,  # the adoption pre-check reads the job live
        update_batch_period: float = 0.0,
        job_finished: Callable[[str, str], bool] = lambda _key, _uid: False,
        job_cleaned: Callable[[str, str], bool] = lambda _key, _uid: False,
    ) -> None:
        self.owned = owned
        self._kind = kind
        self._informer = informer
        self._control = control
        self._owners = owners
        self._expectations = expectations
        self._queue = queue
        self._live_jobs = live_jobs
        self._update_batch_period = update_batch_period
        self._job_finished = job_finished  # (key, uid): this process saw the job finish
        self._job_cleaned = job_cleaned  # (key, uid): its terminal branch ran clean last
        add_job_indexers(informer, kind.labels.job_name)

    def event_handler(self) -> ResourceEventHandlerFuncs:
        return ResourceEventHandlerFuncs(self.on_add, self.on_update, self.on_delete)

    def expectation_key(self, key: str, rtype: str) -> str:
        return gen_expectation_key(key, rtype, self.owned.expectation_suffix)

    # ---- informer handlers -----------------------------------------------------------------

    def _logger(self, obj: Obj) -> Logger:
        if self.owned.noun == "pod":
            return logger_for_pod(obj, self._kind.resource.kind)
        return log

    def on_add(self, obj: Obj, is_in_initial_list: bool = False) -> None:
        # A pod first seen while already terminating (a relist can fold its create and its
        # delete together) still proves the create happened, so it lowers the creation
        # expectation; v0.5.3 skipped it (divergence D32). Names are deterministic, so
        # counting it cannot let a second pod for the index through.
        if self.owned.skip_terminating_adds and meta(obj).get("deletionTimestamp"):
            return
        if get_controller_of(obj) is None:
            return  # orphans are adopted by the next claim
        key = self._owners.owner_key(obj)
        if key is None:
            labels = self._kind.labels
            if self.owned.log_unknown_owner and (
                labels_of(obj).get(labels.group_name) == labels.group_name_value
            ):
                self._logger(obj).info("This %s's job does not exist", self.owned.noun)
            return
        exp_key = self._expectation_key_of(obj, key)
        if exp_key is not None:
            self._enqueue_observed(key, self._expectations.creation_observed(exp_key), obj)

    def on_update(self, old: Obj, cur: Obj) -> None:
        """Enqueue the old owner when the controller ref changed, then the current one: at
        once, or at the end of the batch period, collapsing the updates of its objects within
        it into one sync (D51). An update whose UID changed is the old object's deletion and
        a new one's creation (our names are deterministic: a relist shows the new object
        where the cache held the old one), and both are observed as such (D68)."""
        if meta(cur).get("resourceVersion") == meta(old).get("resourceVersion"):
            return  # a periodic resync: nothing changed
        if same_but_version(old, cur):
            return  # nothing a pass reads changed (the cache keeps only that, D96)
        if meta(cur).get("uid") != meta(old).get("uid"):
            self.on_delete(old)
            self.on_add(cur)
            return
        cur_ref, old_ref = get_controller_of(cur), get_controller_of(old)
        if cur_ref != old_ref and old_ref is not None:
            old_key = self._owners.owner_key(old)
            if old_key is not None:
                self._queue.add(old_key)
        if cur_ref is not None:
            key = self._owners.owner_key(cur)
            if key is None:
                return
            if cur_ref == old_ref and self._settled(key, cur_ref, old, cur):
                return
            if self._update_batch_period > 0:
                if self._queue.waiting(key):
                    return  # the pass already queued reads this update (D96)
                self._queue.add_after(key, self._update_batch_period)
            else:
                self._queue.add(key)

    def on_delete(self, obj: Any) -> None:
        item = unwrap_tombstone(obj)
        if item is None:
            log.error("couldn't get object from tombstone %r", obj)
            return
        key = self._owners.owner_key(item)
        if key is None:
            return
        exp_key = self._expectation_key_of(item, key)
        if exp_key is None:
            return
        met = self._expectations.deletion_observed(exp_key)
        ref = get_controller_of(item) or {}
        if self._job_cleaned(key, str(ref.get("uid", ""))):
            return  # a clean terminal pass issued it or judged the job without it (D97)
        self._enqueue_observed(key, met, item)

    def _enqueue_observed(self, key: str, met: bool, obj: Obj) -> None:
        """Queue the job for an observed create or delete of one of its objects, unless its
        pass would only wait: creates or deletes of that replica type are still in flight
        (``met`` False), and a running job's pass stops before it decodes the job while any
        is (``JobController.sync``); the event that meets the expectation queues it (D95). A
        finished job's pass does not wait for them, so it is queued every time."""
        ref = get_controller_of(obj) or {}
        if met or self._job_finished(key, str(ref.get("uid", ""))):
            self._queue.add(key)

    def _settled(self, key: str, ref: dict[str, Any], old: Obj, cur: Obj) -> bool:
        """True when an update of ``cur`` that kept its owner ``ref`` cannot give its
        finished job's pass work (D54): the job finished in this process and the labels are
        unchanged, so the claim would keep it and clean-up has already judged it. (Deletions
        still queue the job, unless its terminal branch ran clean last (D97): a pass that
        failed after issuing its deletes waits for them.)"""
        return labels_of(old) == labels_of(cur) and self._job_finished(key, str(ref.get("uid", "")))

    def _expectation_key_of(self, obj: Obj, key: str) -> str | None:
        """The expectation key of ``obj`` under job ``key``; None (logged) without a type."""
        rtype = labels_of(obj).get(self._kind.labels.replica_type)
        if rtype is None:
            self._logger(obj).info(
                "This %s maybe not created by %s", self.owned.noun, self._kind.controller_name
            )
            return None
        return self.expectation_key(key, rtype)

    # ---- claiming and deleting -------------------------------------------------------------

    def claim(self, job: J, objects: list[Obj] | None = None) -> list[Obj]:
        """The job's objects among ``objects`` (by default the cached ones: see
        :mod:`.index`), adopting and releasing as needed."""
        labels = job_labels(self._kind, job.name)
        objects = self.cached(job) if objects is None else objects
        namespace, name, uid = job.namespace, job.name, job.uid

        def fresh() -> Obj:
            live = self._live_jobs.get(name, namespace=namespace)
            if meta(live).get("uid") != uid:
                raise RuntimeError(
                    f"original Job {namespace}/{name} is gone: got uid "
                    f"{meta(live).get('uid')}, wanted {uid}"
                )
            return live

        resource = self._kind.resource
        manager = self.owned.manager(
            self._control,
            job,
            selector_from_set(labels),
            resource.api_version,
            resource.kind,
            recheck_deletion_timestamp(fresh),
        )
        claimed = manager.claim(objects)
        if self.owned.replace_stale:
            # adopted orphans among them are deleted by the next pass (replace_stale), once
            # the cache shows them controlled by the job and their deletion can be expected
            claimed = [obj for obj in claimed if not created_before(obj, job)]
        return claimed

    def cached(self, job: J) -> list[Obj]:
        """The cached objects controlled by the job or labelled with its name."""
        return objects_for_job(
            self._informer.get_indexer(),
            self._kind.labels.job_name,
            job.namespace,
            job_labels(self._kind, job.name)[self._kind.labels.job_name],
            job.uid,
        )

    def replace_stale(self, ctx: SyncContext[J], objects: list[Obj]) -> None:
        """Delete the objects among ``objects`` (the pass's snapshot of the cache) that this
        job controls and that were created before it: an earlier job of the same name ran
        them (D67). Their replacements follow once the deletions are seen (see
        ``reconcile_indices``)."""
        if not self.owned.replace_stale:
            return
        job, kind = ctx.job, self._kind.resource.kind
        for obj in objects:
            if not _controlled_by(obj, job.uid) or not created_before(obj, job):
                continue
            if meta(obj).get("deletionTimestamp"):
                continue  # going already
            name = meta(obj).get("name")
            message = (
                f"{self.owned.noun.capitalize()} {name} was created before this {kind} (by an "
                f"earlier {kind} of the same name): it is not this job's run, deleting it to "
                "create it anew"
            )
            ctx.logger.warning(message)
            ctx.event(EVENT_TYPE_WARNING, STALE_REASON, message)
            ctx.collect(self.delete, job, obj)

    def _held_by_going(self, job: J, name: str) -> bool:
        """True when the cache holds an object of that name that this job controls (or that
        its claim adopts) and that is going: terminating, or deleted as stale or without a
        valid index, by this pass or the next. Its deletion brings the job back; a create for
        the name now could only meet AlreadyExists."""
        obj = self._informer.get_indexer().get_by_key(f"{job.namespace}/{name}")
        if obj is None:
            return False
        ref = get_controller_of(obj)
        if ref is None:
            selector = selector_from_set(job_labels(self._kind, job.name))
            if not selector.matches(labels_of(obj)):
                return False  # not ours to replace: the create says so (FailedCreate)
        elif ref.get("uid") != job.uid:
            return False  # another owner's: likewise
        index = labels_of(obj).get(self._kind.labels.replica_index)
        return bool(
            meta(obj).get("deletionTimestamp")
            or (self.owned.replace_stale and created_before(obj, job))
            or not valid_index(index)
        )

    def delete(self, job: J, obj: Obj) -> bool:
        """Delete the cached ``obj`` under a deletion expectation; True when a delete was
        issued. The cache stands in for v0.5.3's live read (D52)."""
        m = meta(obj)
        rt = labels_of(obj).get(self._kind.labels.replica_type, "")
        return self._expectations.run_expected_delete(
            self.expectation_key(object_key(job), rt),
            lambda: self._control.delete(m.get("namespace", ""), m.get("name", ""), job, obj),
        )

    def queue_create(self, ctx: SyncContext[J], rt: str, create: Callable[[], object]) -> None:
        """Queue ``create`` for the end of the pass, raising its creation expectation now."""
        key = self.expectation_key(ctx.key, rt)
        self._expectations.expect_creations(key)
        lane = ctx.creates.setdefault(self.owned.expectation_suffix, [])
        lane.append(ExpectedCreate(self._expectations, key, create))

    # ---- one object per index --------------------------------------------------------------

    def reconcile_indices(
        self,
        ctx: SyncContext[J],
        objects: list[Obj],
        rt: str,
        replicas: int,
        logger: Logger,
        create: Callable[[int], None],
        observe: Callable[[int, Obj], None] | None = None,
        may_create: bool = True,
    ) -> None:
        """Keep one object of replica type ``rt`` per index ``0..replicas-1``: delete those
        out of range and the extras of an index, hand each kept one to ``observe``, and queue
        ``create(index)`` for a missing one while the pass's budget lasts (none when not
        ``may_create``: an ordered start holds the type back, D105)."""
        job, noun = ctx.job, self.owned.noun
        label = self._kind.labels.replica_type
        of_type = [o for o in objects if labels_of(o).get(label) == rt]
        index_label = self._kind.labels.replica_index
        slices, out_of_range, invalid = group_by_index(of_type, replicas, index_label, noun, logger)
        for obj in out_of_range:
            logger.info("Deleting %s %s: its index is out of range", noun, meta(obj).get("name"))
            ctx.collect(self.delete, job, obj)
        for obj in invalid:
            self._delete_invalid(ctx, obj, rt)
        for index in range(replicas):
            same_index = slices.get(index, [])
            if len(same_index) > 1:
                logger.warning("We have too many %ss for %s %d", noun, rt, index)
                same_index = self._delete_extras(ctx, rt, index, same_index)
            if same_index:
                if observe is not None:
                    observe(index, same_index[0])
            elif self._held_by_going(job, gen_general_name(job.name, rt, index)):
                continue  # its holder is going: the create follows its deletion (D67)
            elif may_create and ctx.take_creation():
                logger.debug(self.owned.need_to_create, rt, index)  # D53
                self.queue_create(ctx, rt, partial(create, index))

    def _delete_invalid(self, ctx: SyncContext[J], obj: Obj, rt: str) -> None:
        """An object of replica type ``rt`` without a valid index label is no replica: delete
        it (the Kubernetes Job controller's rule for a pod without a valid completion index;
        D67); a pod named as one of ours is then created again."""
        label = self._kind.labels.replica_index
        value = labels_of(obj).get(label)
        shown = "no" if value is None else f"an invalid ({value!r})"
        message = (
            f"Deleting {self.owned.noun} {meta(obj).get('name')} of replica type {rt}: it has "
            f"{shown} {label} label"
        )
        ctx.logger.warning(message)
        ctx.event(EVENT_TYPE_WARNING, INVALID_INDEX_REASON, message)
        ctx.collect(self.delete, ctx.job, obj)

    def _delete_extras(
        self, ctx: SyncContext[J], rt: str, index: int, objects: list[Obj]
    ) -> list[Obj]:
        """Keep the object not terminating, named as we name it, oldest; delete the others."""
        expected_name = gen_general_name(ctx.job.name, rt, index)
        ordered = sorted(objects, key=lambda obj: _keep_first_key(obj, expected_name))
        for extra in ordered[1:]:
            ctx.collect(self.delete, ctx.job, extra)
        return ordered[:1]


def _keep_first_key(obj: Obj, expected_name: str) -> tuple[bool, bool, str, str]:
    m = meta(obj)
    return (
        bool(m.get("deletionTimestamp")),
        m.get("name") != expected_name,
        m.get("creationTimestamp") or "",
        m.get("name") or "",
    )


def group_by_index(
    objects: list[Obj], replicas: int, index_label: str, noun: str, logger: Logger
) -> tuple[dict[int, list[Obj]], list[Obj], list[Obj]]:
    """In-range index → the objects labelled with it, the objects whose index is out of range
    (e.g. after a scale-down), and those without a valid index label (missing, not a decimal
    integer as we write it: v0.5.3 skipped them, D67).

    Sized by what exists, never by ``replicas`` (v0.5.3 allocated a list per declared replica,
    so an absurd count exhausted the operator's memory before anything else happened).
    """
    slices: dict[int, list[Obj]] = {}
    out_of_range: list[Obj] = []
    invalid: list[Obj] = []
    for obj in objects:
        value = labels_of(obj).get(index_label)
        if value is None:
            logger.warning("The %s do not have the index label.", noun)
            invalid.append(obj)
            continue
        if not valid_index(value):
            logger.warning("Error when parsing the index label %r of a %s", value, noun)
            invalid.append(obj)
            continue
        index = int(value)
        if 0 <= index < replicas:
            slices.setdefault(index, []).append(obj)
        else:
            logger.warning("The label index is not expected: %d", index)
            out_of_range.append(obj)
    return slices, out_of_range, invalid


def valid_index(value: Any) -> bool:
    """An index label as we write them: a decimal integer, no sign, no spaces."""
    return isinstance(value, str) and value.isascii() and value.isdigit()


def _controlled_by(obj: Obj, uid: str) -> bool:
    ref = get_controller_of(obj)
    return ref is not None and ref.get("uid") == uid


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    return _parsed_timestamp(value)


@functools.lru_cache(maxsize=4096)
def _parsed_timestamp(value: str) -> datetime | None:
    """A creation timestamp, parsed once (every pass compares each object's with its job's,
    and many objects share a second)."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def created_before(obj: Obj, job: Job) -> bool:
    """True when ``obj`` was created before ``job`` (whole seconds, as the API stamps them:
    an object of the same second counts as the job's)."""
    created = _timestamp(meta(obj).get("creationTimestamp"))
    job_created = _timestamp(job.metadata.get("creationTimestamp"))
    return created is not None and job_created is not None and created < job_created
