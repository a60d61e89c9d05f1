"""ResourceQuota admission of pod creates, as kube-apiserver's ResourceQuota plugin (on by
default) refuses them, with its words.

For each ResourceQuota of the pod's namespace whose ``hard`` names a resource a pod uses
(``pods``, ``count/pods``, ``cpu``, ``memory``, ``ephemeral-storage`` and their
``requests.``/``limits.`` forms), a pod whose containers leave out a request or limit the quota
counts is refused (``failed quota: <name>: must specify cpu for: <containers>``), and so is a
pod that would take the quota's usage past its limit (``exceeded quota: <name>, requested:
pods=1, used: pods=2, limited: pods=2``), 403 Forbidden. The usage is what the quota
controller would count: every pod object for ``count/pods``; for the rest, the pods not
Succeeded or Failed (nor terminating past their grace period), their requests the sum of their
containers' or the largest init container's, whichever is larger, plus the pod overhead.

Where the emulator is simpler (docs/emulator-differences.md): the limits are the quota's
``spec.hard`` and the usage is counted from the stored pods at each create (there is no quota
controller writing ``status.hard`` and ``status.used``, so a quota holds at once and its status
stays as written); quotas with ``scopes`` or a ``scopeSelector`` are not enforced; only pods
are counted (no object counts of other kinds, no extended resources or hugepages).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from localcluster.apimachinery import quantity

COMPUTE = ("cpu", "memory", "ephemeral-storage")
POD_RESOURCES = frozenset(
    {"pods", "count/pods"}
    | set(COMPUTE)
    | {f"{kind}.{r}" for kind in ("requests", "limits") for r in COMPUTE}
)
# what every container must request (or limit) once a quota counts it (the plugin's
# backward-compatibility rule)
MUST_SPECIFY = frozenset(
    {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
)


class QuotaRefusal(Exception):
    """The pod is refused; ``str(err)`` is why, as the plugin words it after "is forbidden: "."""


# a usage: resource name -> (value, the quantity format its text keeps)
Usage = dict[str, tuple[Decimal, str]]


def _resources(container: Mapping[str, Any], part: str) -> dict[str, quantity.Quantity]:
    return _quantities((container.get("resources") or {}).get(part))


def _quantities(values: Any) -> dict[str, quantity.Quantity]:
    out = {}
    for name, value in values.items() if isinstance(values, dict) else ():
        try:
            out[name] = quantity.parse_quantity(value)
        except quantity.QuantityError:
            continue  # validation refuses it
    return out


def _container_usage(container: Mapping[str, Any]) -> Usage:
    """One container's compute usage, as the plugin's ``podComputeUsageHelper`` has it."""
    requests, limits = _resources(container, "requests"), _resources(container, "limits")
    out: Usage = {}
    for name in COMPUTE:
        if name in requests:
            q = requests[name]
            out[name] = out[f"requests.{name}"] = (q.value, q.format)
        if name in limits:
            out[f"limits.{name}"] = (limits[name].value, limits[name].format)
    return out


def _add(total: Usage, more: Usage) -> None:
    for name, (value, fmt) in more.items():
        before = total.get(name)
        total[name] = (value, fmt) if before is None else (before[0] + value, before[1])


def _counts(pod: Mapping[str, Any], now: datetime) -> bool:
    """Whether the pod's compute resources count (``QuotaV1Pod``)."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    deleted, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if deleted and isinstance(grace, int):
        when = datetime.strptime(deleted, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        if now > when + timedelta(seconds=grace):
            return False
    return True


def pod_usage(pod: Mapping[str, Any], now: datetime) -> Usage:
    """What the pod takes of a quota."""
    usage: Usage = {"count/pods": (Decimal(1), quantity.DECIMAL_SI)}
    if not _counts(pod, now):
        return usage
    usage["pods"] = (Decimal(1), quantity.DECIMAL_SI)
    spec = pod.get("spec") or {}
    total: Usage = {}
    for container in spec.get("containers") or ():
        _add(total, _container_usage(container))
    for init in spec.get("initContainers") or ():
        for name, (value, fmt) in _container_usage(init).items():
            if name not in total or total[name][0] < value:
                total[name] = (value, fmt)
    overhead = _quantities(spec.get("overhead"))
    for name in COMPUTE:
        q = overhead.get(name)
        if q is None:
            continue
        for key in (name, f"requests.{name}", f"limits.{name}"):
            if key in total:
                _add(total, {key: (q.value, q.format)})
    usage.update(total)
    return usage


def _text(value: Decimal, fmt: str) -> str:
    return quantity.format_value(value, fmt)


def _pretty(usage: Usage, names: Iterable[str]) -> str:
    return ",".join(f"{n}={_text(*usage[n])}" for n in sorted(names))


def _missing(pod: Mapping[str, Any], required: AbstractSet[str]) -> str | None:
    """``must specify ...`` for the containers that leave out a resource the quota counts."""
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for container in (*(spec.get("containers") or ()), *(spec.get("initContainers") or ())):
        have = set(_container_usage(container))
        for name in required - have:
            missing.setdefault(name, set()).add(str(container.get("name", "")))
    if not missing:
        return None
    parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
    return "must specify " + "; ".join(parts)


def admit_pod(
    pod: Mapping[str, Any],
    quotas: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    now: datetime,
) -> None:
    """Raise :class:`QuotaRefusal` when a quota of the namespace refuses ``pod``; ``pods``: the
    namespace's stored pods."""
    counted = [q for q in quotas if not _scoped(q)]
    hard_of = {str((q.get("metadata") or {}).get("name")): _hard(q) for q in counted}
    interesting = {name: hard for name, hard in hard_of.items() if POD_RESOURCES & set(hard)}
    if not interesting:
        return
    for name in sorted(interesting):
        if (refusal := _missing(pod, MUST_SPECIFY & set(interesting[name]))) is not None:
            raise QuotaRefusal(f"failed quota: {name}: {refusal}")
    used: Usage = {}
    for other in pods:
        _add(used, pod_usage(other, now))
    requested = pod_usage(pod, now)
    for name in sorted(interesting):
        hard = interesting[name]
        asked = {r: requested[r] for r in hard if r in requested}
        before = {r: used.get(r, (Decimal(0), hard[r][1])) for r in hard}
        exceeded = [r for r in asked if before[r][0] + asked[r][0] > hard[r][0]]
        if exceeded:
            raise QuotaRefusal(
                f"exceeded quota: {name}, requested: {_pretty(asked, exceeded)}, "
                f"used: {_pretty(before, exceeded)}, limited: {_pretty(hard, exceeded)}"
            )


def _scoped(quota: Mapping[str, Any]) -> bool:
    spec = quota.get("spec") or {}
    return bool(spec.get("scopes") or spec.get("scopeSelector"))


def _hard(quota: Mapping[str, Any]) -> Usage:
    hard = _quantities((quota.get("spec") or {}).get("hard"))
    return {str(name): (q.value, q.format) for name, q in hard.items()}
