"""A pod's QoS class, as Kubernetes computes it (``ComputePodQOS``) for the API server, which
records it in ``status.qosClass`` on create, and for the kubelet.

Only cpu and memory count, summed over containers and init containers, and only positive
amounts: no request and no limit is BestEffort; a limit for both cpu and memory in every
container, with requests equal to limits, is Guaranteed; anything else is Burstable. Requests
are read as stored, so a limit without its request counts as the request the API server
defaulted from it.
"""

from __future__ import annotations

from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from typing import Any

from localcluster.apimachinery import quantity

_QOS_RESOURCES = ("cpu", "memory")
# Quantities reach 10^(2^31) ("1e999999999" parses, as in apimachinery): sums need the widest
# exponents Decimal has (the default context overflows at 10^999999).
_SUMS = Context(Emax=MAX_EMAX, Emin=MIN_EMIN)


def qos_class(pod: dict[str, Any]) -> str:
    spec = pod.get("spec") or {}
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        resources = (container.get("resources") or {}) if isinstance(container, dict) else {}
        _add_positive(requests, resources.get("requests") or {})
        found = _add_positive(limits, resources.get("limits") or {})
        if not found >= set(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


def _add_positive(total: dict[str, Decimal], amounts: dict[str, Any]) -> set[str]:
    """Add the positive cpu and memory amounts to ``total``; the names that were positive."""
    found = set()
    for name in _QOS_RESOURCES:
        if name in amounts:
            amount = quantity.parse(amounts[name])
            if amount > 0:
                total[name] = _SUMS.add(total.get(name, Decimal(0)), amount)
                found.add(name)
    return found
