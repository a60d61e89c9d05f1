"""What a job asks of its PodGroup: training-operator v1.9's ``schedulingPolicy`` with its
defaults, in one place for every backend (each writes its fields from it, see
:mod:`tf_operator.control.podgroup_control`).

``minMember`` is ``minAvailable`` or the job's total replicas; the queue, priority class and
schedule timeout are the job's. ``minResources``, when the job names none and the backend wants
it (Volcano), is what the first ``minMember`` pods request, taking replica types by the value of
their pods' PriorityClass, highest first (v1.9's ``CalcPGMinResources``): for each container its
requests, or its limits when it states no requests at all. Equal priorities keep the kind's
replica order (v1.9 walked a Go map: any order). A PriorityClass that cannot be read counts as
priority 0, as in v1.9; lookups are cached for a minute, so a pass reads none in the common case.

What no scheduler can ever satisfy is told on the job, which waits (D156): a ``minMember`` above
the job's replicas (:func:`unsatisfiable`), a queue that does not exist (:class:`Queues`:
kube-batch and Volcano leave such a group out of every session without a word).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from cachetools import TTLCache

from tf_operator.apis.common.v1.run_policy import SchedulingPolicy
from tf_operator.apis.common.v1.types import ReplicaSpec
from tf_operator.common.jobcontroller.kind import Job
from tf_operator.control.podgroup_control import GangPolicy, GangSchedulerBackend
from tf_operator.k8s.client import PRIORITY_CLASSES, KubeInterface, Resource, is_not_found
from tf_operator.k8s.quantity import Quantity, QuantityError

log = logging.getLogger(__name__)

# How long a PriorityClass's value is trusted; how many names are kept.
PRIORITY_CACHE_SECONDS = 60.0
PRIORITY_CACHE_SIZE = 256
# How long a Queue found to exist is trusted (a missing one is read again on every pass).
QUEUE_CACHE_SECONDS = 60.0


class PriorityClasses:
    """PriorityClass name -> value, read live and cached; 0 when it cannot be read."""

    def __init__(self, kube_client: KubeInterface) -> None:
        self._classes = kube_client.resource(PRIORITY_CLASSES)
        self._cache: TTLCache[str, int] = TTLCache(PRIORITY_CACHE_SIZE, PRIORITY_CACHE_SECONDS)
        self._lock = threading.Lock()  # the job workers share the cache (cachetools' is not safe)

    def value(self, name: str) -> int:
        if not name:
            return 0
        with self._lock:
            cached = self._cache.get(name)
        if cached is not None:
            return cached
        try:
            value = int(self._classes.get(name).get("value") or 0)
        except Exception as err:
            log.warning("Ignore priority class %s: %s", name, err)
            value = 0
        with self._lock:
            self._cache[name] = value
        return value


class Queues:
    """Whether a gang scheduler's Queue is missing, read live: a queue found is trusted for a
    minute, a missing one is read again on every pass (creating it must be seen). Only a 404
    says missing; any other error (no RBAC for queues, the API down) tells nothing."""

    def __init__(self, kube_client: KubeInterface, resource: Resource | None) -> None:
        self._queues = None if resource is None else kube_client.resource(resource)
        self._found: TTLCache[str, bool] = TTLCache(PRIORITY_CACHE_SIZE, QUEUE_CACHE_SECONDS)
        self._lock = threading.Lock()  # the job workers share the cache (cachetools' is not safe)

    def missing(self, name: str) -> bool:
        if self._queues is None or not name:
            return False
        with self._lock:
            if name in self._found:
                return False
        try:
            self._queues.get(name)
        except Exception as err:
            if is_not_found(err):
                return True
            log.debug("Cannot tell whether queue %s exists: %s", name, err)
            return False
        with self._lock:
            self._found[name] = True
        return False


def unsatisfiable(job: Job, policy: GangPolicy) -> str | None:
    """Why no gang scheduler can ever place the job's group as it asks (pure): a ``minMember``
    above the job's replicas (divergence D156). The job waits, as in training-operator v1.9,
    until its policy or replicas change."""
    replicas = sum(s.replicas or 0 for s in job.replica_specs().values())
    if policy.min_member <= replicas:
        return None
    return (
        f"runPolicy.schedulingPolicy.minAvailable {policy.min_member} is above the job's "
        f"{replicas} replicas: its gang can never be placed; the job waits until minAvailable "
        "is lowered or replicas are added"
    )


def gang_policy(
    job: Job, backend: GangSchedulerBackend, priority_of: Callable[[str], int]
) -> GangPolicy:
    """The PodGroup ``job`` asks for, for ``backend``."""
    specs = job.replica_specs()
    scheduling = job.run_policy.scheduling_policy or SchedulingPolicy()
    min_member = scheduling.min_available
    if min_member is None:
        min_member = sum(s.replicas or 0 for s in specs.values())
    resources = scheduling.min_resources
    if resources is None and backend.computes_min_resources:
        resources = min_resources(min_member, specs, priority_of)
    return GangPolicy(
        min_member=min_member,
        queue=scheduling.queue or "",
        priority_class_name=scheduling.priority_class or "",
        min_resources=resources,
        schedule_timeout_seconds=scheduling.schedule_timeout_seconds,
        min_task_member=task_minimums(scheduling.min_task_member),
    )


def task_minimums(asked: dict[str, int] | None) -> dict[str, int] | None:
    """minTaskMember by task name: a pod's ``volcano.sh/task-spec`` is its replica type in
    lower case (D77)."""
    if not asked:
        return None
    return {name.lower(): count for name, count in asked.items()}


def min_resources(
    min_member: int, specs: dict[str, ReplicaSpec], priority_of: Callable[[str], int]
) -> dict[str, str]:
    """What the first ``min_member`` pods request, by replica priority (see the docstring)."""
    by_priority = sorted(specs.values(), key=lambda s: -priority_of(_priority_class(s)))
    total: dict[str, Quantity] = {}
    pods = 0
    for spec in by_priority:
        for _ in range(spec.replicas or 0):
            if pods >= min_member:
                break
            pods += 1
            for container in spec.containers():
                _add_container(total, container)
    return {name: str(quantity) for name, quantity in total.items()}


def _priority_class(spec: ReplicaSpec) -> str:
    name = (spec.template.get("spec") or {}).get("priorityClassName")
    return name if isinstance(name, str) else ""


def _add_container(total: dict[str, Quantity], container: dict[str, Any]) -> None:
    resources = container.get("resources") or {}
    requests = resources.get("requests")
    # limits stand in only where no requests are stated at all (v1.9's AddResourceList)
    amounts = requests if requests is not None else resources.get("limits")
    for name, amount in (amounts or {}).items():
        try:
            quantity = Quantity.parse(amount)
        except QuantityError:
            continue  # the API server refuses such a pod; nothing to count
        total[name] = total[name] + quantity if name in total else quantity
