"""The arithmetic of Deployments, as upstream's ``deployment/util`` package has it.

Pure functions over plain objects: the pod-template hash that names a ReplicaSet, template
equality that ignores that hash, revisions, ``maxSurge``/``maxUnavailable`` resolution (surge
rounds up, unavailability down, and both zero means one unavailable), how far a rolling update
may scale the new set up (``new_rs_replicas``) and the old sets down
(``old_rs_scale_downs``), the status a Deployment reports and its conditions.

The hash is FNV-32a over the template's canonical JSON, encoded like upstream's
``SafeEncodeString``: same alphabet and shape (e.g. ``5d8c7f9b6``), not the same digits,
since upstream hashes Go's in-memory dump of the struct.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from localcluster.apimachinery.objects import format_time, parse_time

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_PERCENT = re.compile(r"^(\d+)%$")

# Progressing condition reasons and messages
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def template_hash(template: dict[str, Any], collision_count: int | None = None) -> str:
    raw = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        raw += str(collision_count).encode()
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(_fnv32a(raw)))


def _without_hash(template: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(template or {})
    labels = (out.get("metadata") or {}).get("labels")
    if labels:
        labels.pop(HASH_LABEL, None)
    return out


def equal_ignore_hash(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return _without_hash(a) == _without_hash(b)


def revision(obj: dict[str, Any]) -> int:
    try:
        return int(((obj.get("metadata") or {}).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def replicas(obj: dict[str, Any]) -> int:
    return int((obj.get("spec") or {}).get("replicas", 1))


def status_count(rs: dict[str, Any] | None, field: str) -> int:
    return int(((rs or {}).get("status") or {}).get(field) or 0)


def _resolve(value: object, total: int, round_up: bool) -> int:
    if isinstance(value, int):
        return value
    match = _PERCENT.match(str(value or "0"))
    if not match:
        return 0
    scaled = int(match.group(1)) * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def fenceposts(deployment: dict[str, Any]) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) as absolute pod counts."""
    rolling = ((deployment.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas(deployment)
    surge = _resolve(rolling.get("maxSurge", "25%"), desired, True)
    unavailable = _resolve(rolling.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_rolling(deployment: dict[str, Any]) -> bool:
    strategy = (deployment.get("spec") or {}).get("strategy") or {}
    return bool(strategy.get("type", "RollingUpdate") == "RollingUpdate")


def max_unavailable(deployment: dict[str, Any]) -> int:
    if not is_rolling(deployment) or replicas(deployment) == 0:
        return 0
    return min(fenceposts(deployment)[1], replicas(deployment))


def max_surge(deployment: dict[str, Any]) -> int:
    return fenceposts(deployment)[0] if is_rolling(deployment) else 0


def new_rs_replicas(
    deployment: dict[str, Any], all_sets: list[dict[str, Any]], new_rs: dict[str, Any] | None
) -> int:
    """How many replicas the new set may have now (rolling: within the surge)."""
    desired = replicas(deployment)
    current_new = replicas(new_rs) if new_rs is not None else 0
    if not is_rolling(deployment):
        return desired
    total = sum(replicas(rs) for rs in all_sets)
    allowed = desired + max_surge(deployment)
    if total >= allowed:
        return current_new
    return current_new + min(allowed - total, desired - current_new)


def old_rs_scale_downs(
    deployment: dict[str, Any],
    all_sets: list[dict[str, Any]],
    old_sets: list[dict[str, Any]],
    new_rs: dict[str, Any],
) -> dict[str, int]:
    """New replica counts for old sets a rolling update may scale down now (by name): first
    their unhealthy replicas, then available ones, keeping ``replicas - maxUnavailable``
    available; oldest sets first."""
    old_sets = sorted((rs for rs in old_sets if replicas(rs) > 0), key=creation_order)
    if not old_sets:
        return {}
    all_pods = sum(replicas(rs) for rs in all_sets)
    min_available = replicas(deployment) - max_unavailable(deployment)
    new_unavailable = replicas(new_rs) - status_count(new_rs, "availableReplicas")
    budget = all_pods - min_available - new_unavailable
    if budget <= 0:
        return {}
    original = {rs["metadata"]["name"]: replicas(rs) for rs in old_sets}
    target = dict(original)
    cleaned = 0
    for rs in old_sets:  # unhealthy replicas first
        name = rs["metadata"]["name"]
        unhealthy = target[name] - status_count(rs, "availableReplicas")
        if cleaned >= budget or unhealthy <= 0:
            continue
        step = min(budget - cleaned, unhealthy)
        target[name] -= step
        cleaned += step
    # A set's status may still count pods its scale-down just deleted (the ReplicaSet
    # controller writes status after deleting): never count more than its spec asks for.
    available = sum(min(status_count(rs, "availableReplicas"), replicas(rs)) for rs in all_sets)
    room = available - min_available
    scaled = 0
    for rs in old_sets:
        name = rs["metadata"]["name"]
        if scaled >= room or target[name] == 0:
            continue
        step = min(target[name], room - scaled)
        target[name] -= step
        scaled += step
    return {name: count for name, count in target.items() if count != original[name]}


def creation_order(obj: dict[str, Any]) -> tuple[float, str]:
    """Sort key: oldest first, then by name (the controller's ``ReplicaSetsByCreationTimestamp``)."""
    meta = obj["metadata"]
    return (parse_time(meta.get("creationTimestamp") or "") or 0.0, meta["name"])


# ---------------------------------------------------------------------- status


def condition(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def set_condition(
    status: dict[str, Any], kind: str, value: str, reason: str, message: str, now: float
) -> None:
    """Replace the condition ``kind``; its transition time survives when the status does."""
    current = condition(status, kind)
    stamp = format_time(now)
    new = {
        "type": kind,
        "status": value,
        "lastUpdateTime": stamp,
        "lastTransitionTime": current["lastTransitionTime"]
        if current and current.get("status") == value
        else stamp,
        "reason": reason,
        "message": message,
    }
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != kind] + [
        new
    ]


def calculate_status(
    deployment: dict[str, Any],
    all_sets: list[dict[str, Any]],
    new_rs: dict[str, Any] | None,
    now: float,
) -> dict[str, Any]:
    old = deployment.get("status") or {}
    available = sum(status_count(rs, "availableReplicas") for rs in all_sets)
    total = sum(replicas(rs) for rs in all_sets)
    status = {
        "observedGeneration": deployment["metadata"].get("generation", 1),
        "replicas": sum(status_count(rs, "replicas") for rs in all_sets),
        "updatedReplicas": status_count(new_rs, "replicas"),
        "readyReplicas": sum(status_count(rs, "readyReplicas") for rs in all_sets),
        "availableReplicas": available,
        "unavailableReplicas": max(total - available, 0),
        "conditions": copy.deepcopy(old.get("conditions") or []),
    }
    if old.get("collisionCount"):
        status["collisionCount"] = old["collisionCount"]
    if available >= replicas(deployment) - max_unavailable(deployment):
        set_condition(
            status,
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            now,
        )
    else:
        set_condition(
            status,
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            now,
        )
    _keep_times(old, status)
    return status


def _keep_times(old: dict[str, Any], new: dict[str, Any]) -> None:
    """A condition whose status, reason and message did not change keeps its timestamps."""
    for cond in new.get("conditions") or []:
        before = condition(old, cond["type"])
        if before and all(before.get(k) == cond.get(k) for k in ("status", "reason", "message")):
            cond["lastUpdateTime"] = before.get("lastUpdateTime", cond["lastUpdateTime"])
            cond["lastTransitionTime"] = before.get(
                "lastTransitionTime", cond["lastTransitionTime"]
            )


def complete(deployment: dict[str, Any], status: dict[str, Any]) -> bool:
    desired = replicas(deployment)
    return (
        status.get("updatedReplicas") == desired
        and status.get("replicas") == desired
        and status.get("availableReplicas") == desired
        and status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 1)
    )


def progressing(deployment: dict[str, Any], status: dict[str, Any]) -> bool:
    old = deployment.get("status") or {}
    old_olds = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_olds = status.get("replicas", 0) - status.get("updatedReplicas", 0)
    return bool(
        status.get("updatedReplicas", 0) > old.get("updatedReplicas", 0)
        or new_olds < old_olds
        or status.get("readyReplicas", 0) > old.get("readyReplicas", 0)
        or status.get("availableReplicas", 0) > old.get("availableReplicas", 0)
    )


def deadline_left(deployment: dict[str, Any], status: dict[str, Any], now: float) -> float | None:
    """Seconds until the progress deadline passes; None when none applies, <= 0 once passed."""
    deadline = (deployment.get("spec") or {}).get("progressDeadlineSeconds")
    cond = condition(status, "Progressing")
    if (
        deadline is None
        or cond is None
        or cond.get("reason") in (NEW_RS_AVAILABLE, TIMED_OUT, PAUSED)
    ):
        return None
    since = parse_time(cond.get("lastUpdateTime") or "") or now
    return since + int(deadline) - now
