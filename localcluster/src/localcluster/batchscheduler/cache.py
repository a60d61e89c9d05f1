"""The batch scheduler's cache: informers feed a live model; ``snapshot()`` builds a session's
jobs, nodes and queues from it; its writer methods are the only API writes a flavour makes.

Sources: the shared ``NodeLedger`` (nodes, and every pod through a listener, of which this
flavour keeps those whose ``schedulerName`` is its own), and informers for the flavour's
PodGroups and Queues and for PriorityClasses. ``sync()`` is the barrier over all of them.

Pod to job: annotation ``scheduling.k8s.io/group-name`` names a PodGroup in the pod's
namespace (job id ``<namespace>/<name>``). A pod without it forms, with the other pods of
its controller, a *shadow* group of minMember 1 (kube-batch's in-memory shadow PodGroup; the
Volcano flavour does the same instead of creating real ``podgroup-<uid>`` objects), so such
pods get no gang semantics, as with v0.5.3. A job appears in a snapshot only if its PodGroup
and its queue exist.

Objects this cache writes (a bound pod, a PodGroup status) are kept as written until the
informers deliver something at least as new, so the next cycle never acts on a stale copy.
Events are emitted only when (reason, message) differs from the last one for that object
(upstream repeated them every cycle: difference 5).
"""

from __future__ import annotations

import copy
import json
import logging
import threading
from dataclasses import dataclass
from typing import Any, cast

from localcluster.batchscheduler.api import (
    DEFAULT_TASK_PRIORITY,
    ON_NODE,
    JobInfo,
    NodeInfo,
    QueueInfo,
    Resources,
    TaskInfo,
    TaskStatus,
    task_status,
    to_resources,
)
from localcluster.batchscheduler.flavours import (
    DEFAULT_QUEUE,
    GROUP_NAME_ANNOTATION,
    PREEMPTABLE_ANNOTATION,
    PRIORITY_CLASSES,
    TASK_SPEC_ANNOTATION,
    Flavour,
)
from localcluster.client.api import ClusterClient
from localcluster.client.events import record_event
from localcluster.client.informer import PODS, Informer, object_key
from localcluster.scheduler.ledger import NodeLedger
from localcluster.scheduler.podconditions import ConditionReporter, patch_condition
from localcluster.scheduler.predicates import nonzero_requests, running_and_effective_requests

logger = logging.getLogger(__name__)


@dataclass
class Snapshot:
    jobs: dict[str, JobInfo]
    nodes: dict[str, NodeInfo]
    queues: dict[str, QueueInfo]
    malformed: dict[
        str, tuple[dict[str, Any], str]
    ]  # pending pods that cannot be evaluated, with why


def _rv(obj: dict[str, Any] | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _ignore(_event_type: str, _obj: dict[str, Any], _old: dict[str, Any] | None) -> None:
    pass


TaskRequests = tuple[Resources, Resources, Resources]


def task_requests(pod: dict[str, Any]) -> TaskRequests:
    """(Resreq, InitResreq, non-zero): containers summed; at least the largest init container;
    cpu and memory as scoring counts them."""
    running, effective = running_and_effective_requests(pod)
    return to_resources(running), to_resources(effective), to_resources(nonzero_requests(pod))


def placement_key(pod: dict[str, Any]) -> str:
    """What the static predicates look at, as one string (see ``TaskInfo.placement``)."""
    spec = pod.get("spec") or {}
    parts = (
        spec.get("nodeSelector"),
        (spec.get("affinity") or {}).get("nodeAffinity"),
        spec.get("tolerations"),
    )
    return json.dumps(parts, sort_keys=True, default=str)


def _min_task_member(key: str, value: object) -> dict[str, int]:
    """Volcano's ``spec.minTaskMember`` (task-spec name -> minimum); an entry that is not a
    count is left out (logged), as the CRD's schema would have refused it."""
    if not isinstance(value, dict):
        if value is not None:
            logger.warning("volcano: podgroup %s: minTaskMember is not a map; ignored", key)
        return {}
    out: dict[str, int] = {}
    for task, member in value.items():
        if isinstance(member, int) and not isinstance(member, bool):
            out[str(task)] = member
        else:
            logger.warning("volcano: podgroup %s: minTaskMember[%s] is not a count", key, task)
    return out


def _controller_uid(pod: dict[str, Any]) -> str | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return cast(str | None, ref.get("uid"))
    return None


def _is_ready(node: dict[str, Any]) -> bool:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False


class BatchCache:
    """Live model of one flavour's world, and its API writer (see module docstring)."""

    def __init__(self, client: ClusterClient, ledger: NodeLedger, flavour: Flavour) -> None:
        self.client = client
        self.ledger = ledger
        self.flavour = flavour
        self._lock = threading.Lock()
        self._pods: dict[str, dict[str, Any]] = {}
        # pod key -> (rv, (resreq, init resreq, nonzero), placement key): parsed once per version
        self._parsed: dict[str, tuple[int, TaskRequests, str]] = {}
        self._written: dict[str, dict[str, Any]] = {}  # PodGroups as we last wrote them
        self._last_event: dict[str, tuple[str, str]] = {}
        self._reporter = ConditionReporter(client, flavour.name)
        self.podgroups = Informer(client, flavour.podgroups, self._on_podgroup)
        self.queues = Informer(client, flavour.queues, _ignore)
        self.priority_classes = Informer(client, PRIORITY_CLASSES, _ignore)
        ledger.add_pod_listener(self._on_pod)

    # -- feeding ------------------------------------------------------------------------

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = self.ledger.start(stop_event)
        for informer in (self.podgroups, self.queues, self.priority_classes):
            threads.append(informer.start(stop_event))
        return threads

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        informers = (self.podgroups, self.queues, self.priority_classes)
        return self.ledger.wait_for_sync(timeout) and all(
            i.wait_for_sync(timeout) for i in informers
        )

    def sync(self, timeout: float = 10.0) -> bool:
        """Apply every change committed before this call (see ``Informer.sync``)."""
        informers = (self.priority_classes, self.queues, self.podgroups)
        return all(i.sync(timeout) for i in informers) and self.ledger.sync(timeout)

    def _on_pod(self, event_type: str, pod: dict[str, Any], _old: dict[str, Any] | None) -> None:
        if (pod.get("spec") or {}).get("schedulerName") != self.flavour.name:
            return
        key = object_key(pod)
        with self._lock:
            if event_type == "DELETED":
                self._pods.pop(key, None)
                self._parsed.pop(key, None)
                self._reporter.forget(key)
            elif _rv(pod) >= _rv(self._pods.get(key)):
                self._pods[key] = pod

    def _observe_pod(self, pod: dict[str, Any]) -> None:
        """A pod as returned by our own write: keep it unless the informer has newer."""
        key = object_key(pod)
        with self._lock:
            if key in self._pods and _rv(pod) > _rv(self._pods[key]):
                self._pods[key] = pod

    def _on_podgroup(
        self, event_type: str, podgroup: dict[str, Any], _old: dict[str, Any] | None
    ) -> None:
        key = object_key(podgroup)
        with self._lock:
            written = self._written.get(key)
            if event_type == "DELETED" or (written is not None and _rv(podgroup) >= _rv(written)):
                self._written.pop(key, None)
            if event_type == "DELETED":
                self._last_event.pop(key, None)

    # -- snapshot -----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Fresh, independent jobs, nodes and queues for one session."""
        nodes = self._nodes()
        queues = self._queues()
        priorities, default_priority = self._priorities()
        jobs = self._jobs(queues, priorities, default_priority)
        with self._lock:
            pods = list(self._pods.values())
        malformed: dict[str, tuple[dict[str, Any], str]] = {}
        for pod in pods:
            try:
                self._add_task(pod, jobs, nodes, queues, priorities)
            except Exception as err:  # noqa: BLE001 - one malformed pod must not stop the cycle
                if task_status(pod) == TaskStatus.PENDING:
                    malformed[object_key(pod)] = (pod, f"cannot evaluate pod: {err}")
                logger.warning("%s: pod %s: %s", self.flavour.name, object_key(pod), err)
        return Snapshot(jobs, nodes, queues, malformed)

    def _nodes(self) -> dict[str, NodeInfo]:
        out: dict[str, NodeInfo] = {}
        for name, info in self.ledger.snapshot().items():
            if not _is_ready(info.node):
                continue
            try:
                allocatable = info.allocatable()
            except ValueError:
                logger.warning("%s: node %s has unparsable capacity", self.flavour.name, name)
                continue
            max_pods = allocatable.get("pods")
            out[name] = NodeInfo(
                name=name,
                node=info.node,
                allocatable=to_resources(allocatable),
                used=to_resources(info.requested),
                releasing=to_resources(info.releasing),
                nonzero=to_resources(info.nonzero),
                max_pods=int(max_pods) if max_pods is not None else None,
                pod_count=info.pod_count,
            )
        return out

    def _queues(self) -> dict[str, QueueInfo]:
        out = {}
        for queue in self.queues.items():
            meta, spec = queue.get("metadata") or {}, queue.get("spec") or {}
            try:
                weight = int(spec.get("weight") or 0)
            except (TypeError, ValueError):
                weight = 0
            out[meta["name"]] = QueueInfo(
                name=meta["name"],
                weight=weight if weight > 0 else 1,  # 0 would starve the queue (difference 10)
                reclaimable=spec.get("reclaimable", True) is not False,
                created=meta.get("creationTimestamp") or "",
            )
        return out

    def _priorities(self) -> tuple[dict[str, int], int]:
        values, default = {}, 0
        for pc in self.priority_classes.items():
            try:
                value = int(pc.get("value") or 0)
            except (TypeError, ValueError):
                continue
            values[pc["metadata"]["name"]] = value
            if pc.get("globalDefault"):
                default = value
        return values, default

    def _jobs(
        self, queues: dict[str, QueueInfo], priorities: dict[str, int], default: int
    ) -> dict[str, JobInfo]:
        jobs: dict[str, JobInfo] = {}
        with self._lock:
            written = dict(self._written)
        for informed in self.podgroups.items():
            key = object_key(informed)
            podgroup = written.get(key, informed)
            meta, spec = podgroup.get("metadata") or {}, podgroup.get("spec") or {}
            queue = spec.get("queue") or DEFAULT_QUEUE
            if queue not in queues:
                logger.debug("%s: podgroup %s: queue %s not found", self.flavour.name, key, queue)
                continue
            status = copy.deepcopy(podgroup.get("status") or {})
            try:
                min_member = int(spec.get("minMember") or 0)
            except (TypeError, ValueError):
                logger.warning("%s: podgroup %s: bad minMember", self.flavour.name, key)
                continue
            min_task_member = (
                _min_task_member(key, spec.get("minTaskMember")) if self.flavour.volcano else {}
            )
            jobs[key] = JobInfo(
                uid=key,
                namespace=meta.get("namespace") or "",
                name=meta.get("name") or "",
                min_member=min_member,
                min_task_member=min_task_member,
                queue=queue,
                priority=priorities.get(spec.get("priorityClassName") or "", default),
                created=meta.get("creationTimestamp") or "",
                podgroup=podgroup,
                phase=status.get("phase") or "",
                conditions=list(status.get("conditions") or []),
            )
        return jobs

    def _shadow_job(
        self, pod: dict[str, Any], jobs: dict[str, JobInfo], queues: dict[str, QueueInfo]
    ) -> JobInfo | None:
        meta = pod.get("metadata") or {}
        uid = f"shadow/{_controller_uid(pod) or meta.get('uid')}"
        if uid not in jobs:
            if DEFAULT_QUEUE not in queues:
                return None
            jobs[uid] = JobInfo(
                uid=uid,
                namespace=meta.get("namespace") or "",
                name=uid,
                min_member=1,
                queue=DEFAULT_QUEUE,
                priority=0,
                created=meta.get("creationTimestamp") or "",
                podgroup=None,
                phase="Inqueue",
            )
        return jobs[uid]

    def _parse(self, key: str, pod: dict[str, Any]) -> tuple[TaskRequests, str]:
        rv = _rv(pod)
        with self._lock:
            cached = self._parsed.get(key)
        if cached is not None and cached[0] == rv:
            return cached[1], cached[2]
        requests = task_requests(pod)
        placement = placement_key(pod)
        with self._lock:
            self._parsed[key] = (rv, requests, placement)
        return requests, placement

    def _add_task(
        self,
        pod: dict[str, Any],
        jobs: dict[str, JobInfo],
        nodes: dict[str, NodeInfo],
        queues: dict[str, QueueInfo],
        priorities: dict[str, int],
    ) -> None:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        annotations = meta.get("annotations") or {}
        group = annotations.get(GROUP_NAME_ANNOTATION)
        if group:
            job = jobs.get(f"{meta.get('namespace')}/{group}")
        else:
            job = self._shadow_job(pod, jobs, queues)
        if job is None:
            return
        key = object_key(pod)
        (resreq, init, nonzero), placement = self._parse(key, pod)
        status = task_status(pod)
        node_name = spec.get("nodeName")
        if status == TaskStatus.PENDING:
            assumed = self.ledger.node_of(key)
            if assumed is not None:  # bound by us; the binding is on its way
                status, node_name = TaskStatus.BINDING, assumed
        priority = spec.get("priority")
        if priority is None:
            priority = priorities.get(spec.get("priorityClassName") or "", DEFAULT_TASK_PRIORITY)
        task = TaskInfo(
            key=key,
            name=meta.get("name") or "",
            namespace=meta.get("namespace") or "",
            job=job.uid,
            pod=pod,
            resreq=resreq,
            init_resreq=init,
            nonzero=nonzero,
            status=status,
            node=node_name,
            priority=int(priority),
            created=meta.get("creationTimestamp") or "",
            task_spec=annotations.get(TASK_SPEC_ANNOTATION) or "",
            preemptable=str(annotations.get(PREEMPTABLE_ANNOTATION, "true")).lower() != "false",
            placement=placement,
        )
        job.add_task(task)
        if node_name in nodes and status in ON_NODE:
            nodes[node_name].tasks[key] = task  # its resources are already in the ledger's

    # -- writing (the sessions' Writer) ---------------------------------------------------

    def bind(self, tasks: list[TaskInfo]) -> set[str]:
        failures = self.ledger.try_assume_all([(t.pod, t.node or "") for t in tasks])
        if failures:
            logger.info("%s: gang no longer fits, binding none: %s", self.flavour.name, failures)
            return {t.key for t in tasks}
        failed = set()
        for task in tasks:
            try:
                bound = self.client.bind(task.namespace, task.name, task.node or "")
            except Exception as err:  # noqa: BLE001 - deleted or bound meanwhile
                logger.info("%s: binding %s failed: %s", self.flavour.name, task.key, err)
                self.ledger.forget(task.key)
                failed.add(task.key)
                continue
            self._observe_pod(bound)
            logger.debug("%s: bound %s to %s", self.flavour.name, task.key, task.node)
            message = f"Successfully assigned {task.key} to {task.node}"
            record_event(self.client, task.pod, "Normal", "Scheduled", message, self.flavour.name)
        return failed

    def evict(self, task: TaskInfo, reason: str) -> bool:
        message = f"Pod is evicted, because of {reason}"
        try:
            if self.flavour.volcano:
                condition = {
                    "type": "Ready",
                    "status": "False",
                    "reason": "Evict",
                    "message": message,
                }
                self._observe_pod(patch_condition(self.client, task.pod, condition))
                record_event(self.client, task.pod, "Warning", "Evict", message, self.flavour.name)
            self.client.delete(PODS, task.namespace, task.name)
        except Exception as err:  # noqa: BLE001 - gone already: nothing to evict
            logger.info("%s: evicting %s failed: %s", self.flavour.name, task.key, err)
            return False
        logger.debug("%s: evicted %s (%s)", self.flavour.name, task.key, reason)
        return True

    def job_event(self, job: JobInfo, event_type: str, reason: str, message: str) -> None:
        """An event on the job's PodGroup, every time (evictions)."""
        if job.podgroup is not None:
            self._event(job.uid, job.podgroup, event_type, reason, message, dedupe=False)

    def write_podgroup_status(self, job: JobInfo, status: dict[str, Any]) -> None:
        """Merge-patch ``status`` (no resourceVersion: never conflicts with minMember edits),
        on ``/status`` only when the CRD has that subresource (Volcano's and kube-batch's
        upstream CRDs do not)."""
        info = self.client.resource_info(self.flavour.podgroups)
        subresource = "status" if "status" in info.subresources else None
        # counters are omitted when zero (as upstream's omitempty): null removes a stale one
        body = {"running": None, "succeeded": None, "failed": None, **status}
        try:
            written = self.client.patch(
                self.flavour.podgroups,
                job.namespace,
                job.name,
                {"status": body},
                "merge",
                subresource=subresource,
            )
        except Exception as err:  # noqa: BLE001 - deleted meanwhile: the informer will tell
            logger.info("%s: status of %s not written: %s", self.flavour.name, job.uid, err)
            return
        with self._lock:
            self._written[job.uid] = written

    def podgroup_event(self, job: JobInfo, event_type: str, reason: str, message: str) -> None:
        """A PodGroup event, only when (reason, message) differs from the last one."""
        if job.podgroup is not None:
            self._event(job.uid, job.podgroup, event_type, reason, message, dedupe=True)

    def set_pod_condition(
        self, pod: dict[str, Any], reason: str, message: str, event_reason: str | None = None
    ) -> None:
        """PodScheduled=False with ``reason``/``message`` plus a Warning event (the flavour's
        reason unless given), on change only."""
        patched = self._reporter.report(
            pod, reason, message, event_reason or self.flavour.pod_event_reason
        )
        if patched is not None:
            self._observe_pod(patched)

    def _event(
        self,
        key: str,
        obj: dict[str, Any],
        event_type: str,
        reason: str,
        message: str,
        dedupe: bool,
    ) -> None:
        if dedupe:
            with self._lock:
                if self._last_event.get(key) == (reason, message):
                    return
                self._last_event[key] = (reason, message)
        record_event(self.client, obj, event_type, reason, message, self.flavour.name)
