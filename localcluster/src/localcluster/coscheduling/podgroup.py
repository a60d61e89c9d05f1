"""scheduler-plugins' PodGroup (``scheduling.x-k8s.io/v1alpha1``) as the plugin reads it.

A pod belongs to the group named by its ``scheduling.x-k8s.io/pod-group`` label, in its own
namespace. ``PodGroupSpec.parse`` reads what the plugin needs from the object: ``minMember``,
``minResources`` (parsed quantities) and ``scheduleTimeoutSeconds``; the creation time orders
the scheduling queue. A field the CRD's schema would have refused counts as absent (logged),
so one bad object never stops the scheduler.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from localcluster.apimachinery.objects import parse_time
from localcluster.scheduler.quantity import parse_quantity

logger = logging.getLogger(__name__)

GVR = tuple[str, str, str]
PODGROUPS: GVR = ("scheduling.x-k8s.io", "v1alpha1", "podgroups")
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"

# The PodGroup controller's phases (apis/scheduling/v1alpha1).
PENDING, SCHEDULING, RUNNING, FINISHED, FAILED = (
    "Pending",
    "Scheduling",
    "Running",
    "Finished",
    "Failed",
)

Obj = dict[str, Any]


def group_label(pod: Obj) -> str:
    """The pod's group name ("" when it has none)."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    value = labels.get(POD_GROUP_LABEL)
    return value if isinstance(value, str) else ""


def group_key(pod: Obj) -> str:
    """``<namespace>/<group>`` of the pod's group, "" when it has none."""
    name = group_label(pod)
    if not name:
        return ""
    return f"{(pod.get('metadata') or {}).get('namespace') or ''}/{name}"


@dataclass(frozen=True)
class PodGroupSpec:
    key: str  # namespace/name
    name: str
    min_member: int
    min_resources: dict[str, Fraction] | None
    schedule_timeout_seconds: int | None
    created: float  # creationTimestamp, seconds since the epoch (0 when missing)

    @classmethod
    def parse(cls, podgroup: Obj) -> PodGroupSpec:
        meta = podgroup.get("metadata") or {}
        spec = podgroup.get("spec") or {}
        key = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        min_member = spec.get("minMember")
        if not isinstance(min_member, int) or isinstance(min_member, bool):
            if min_member is not None:
                logger.warning("podgroup %s: minMember %r is not a count", key, min_member)
            min_member = 0
        timeout = spec.get("scheduleTimeoutSeconds")
        if timeout is not None and (not isinstance(timeout, int) or isinstance(timeout, bool)):
            logger.warning("podgroup %s: scheduleTimeoutSeconds %r ignored", key, timeout)
            timeout = None
        resources: dict[str, Fraction] | None = None
        raw = spec.get("minResources")
        if isinstance(raw, dict):
            resources = {}
            for name, value in raw.items():
                try:
                    resources[str(name)] = parse_quantity(value)
                except ValueError:
                    logger.warning("podgroup %s: minResources[%s] %r ignored", key, name, value)
        return cls(
            key=key,
            name=str(meta.get("name") or ""),
            min_member=min_member,
            min_resources=resources,
            schedule_timeout_seconds=timeout,
            created=parse_time(str(meta.get("creationTimestamp") or "")) or 0.0,
        )
