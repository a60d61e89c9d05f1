"""Filtering and scoring rules of the default scheduler, as pure functions.

Each predicate looks at one pod and one ``NodeInfo`` (a node plus what is
already bound to it) and returns the reasons the pod does not fit, worded as the
real scheduler words them, so ``unschedulable_message`` can aggregate them into
"0/2 nodes are available: 2 Insufficient nvidia.com/gpu.". Nothing here talks to
the API server; the scheduler loop feeds these functions from its caches.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

from localcluster.scheduler.quantity import parse_quantity

TERMINAL_PHASES = ("Succeeded", "Failed")
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NOT_READY = "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"
REASON_TOO_MANY_PODS = "Too many pods"
# The taint a cordoned node stands for (``kubectl cordon``, ``kubectl drain``)
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
# Taint effects that keep new pods off a node (PreferNoSchedule only lowers a node's score).
BLOCKING_TAINT_EFFECTS = ("NoSchedule", "NoExecute")
# What scoring counts for a container that requests no cpu / memory (kube-scheduler's
# DefaultMilliCPURequest, DefaultMemoryRequest), so pods without requests never look free.
DEFAULT_CPU_REQUEST = Fraction(1, 10)
DEFAULT_MEMORY_REQUEST = Fraction(200 * 2**20)


def add_amounts(target: dict[str, Fraction], amounts: dict[str, Fraction], sign: int = 1) -> None:
    """``target += sign * amounts``, in place."""
    for name, value in amounts.items():
        target[name] = target.get(name, Fraction(0)) + sign * value


def _sum_into(total: dict[str, Fraction], resources: dict[str, Any] | None) -> None:
    for name, value in (resources or {}).items():
        total[name] = total.get(name, Fraction(0)) + parse_quantity(value)


def container_requests(container: dict[str, Any]) -> dict[str, Fraction]:
    """Requests of one container; limits stand in for missing requests (API defaulting)."""
    resources = container.get("resources") or {}
    merged = dict(resources.get("limits") or {})
    merged.update(resources.get("requests") or {})
    out: dict[str, Fraction] = {}
    _sum_into(out, merged)
    return out


def _running_and_effective(
    pod: dict[str, Any], per_container: Callable[[dict[str, Any]], dict[str, Fraction]]
) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """(``per_container`` summed over the containers, that sum raised to the largest init
    container)."""
    spec = pod.get("spec") or {}
    running: dict[str, Fraction] = {}
    for container in spec.get("containers") or []:
        add_amounts(running, per_container(container))
    effective = dict(running)
    for container in spec.get("initContainers") or []:
        for name, value in per_container(container).items():
            effective[name] = max(effective.get(name, Fraction(0)), value)
    return running, effective


def running_and_effective_requests(
    pod: dict[str, Any],
) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """(what the pod holds while it runs, what it needs to start): the second is the first
    raised to the largest init container."""
    return _running_and_effective(pod, container_requests)


def pod_requests(pod: dict[str, Any]) -> dict[str, Fraction]:
    """Effective requests: sum over containers, at least the largest init container."""
    return running_and_effective_requests(pod)[1]


def _container_nonzero(container: dict[str, Any]) -> dict[str, Fraction]:
    requests = container_requests(container)
    return {
        "cpu": requests.get("cpu", DEFAULT_CPU_REQUEST),
        "memory": requests.get("memory", DEFAULT_MEMORY_REQUEST),
    }


def nonzero_requests(pod: dict[str, Any]) -> dict[str, Fraction]:
    """The cpu and memory scoring counts for the pod: as ``pod_requests``, but a container that
    names no cpu (memory) request counts the default (an explicit 0 stays 0)."""
    effective = _running_and_effective(pod, _container_nonzero)[1]
    return {"cpu": Fraction(0), "memory": Fraction(0), **effective}


def is_active(pod: dict[str, Any]) -> bool:
    """A bound pod still holds its node's resources until it reaches a terminal phase."""
    return (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES


@dataclass
class NodeInfo:
    """A node and the sum of the requests of the active pods bound to it.

    ``releasing`` is the part of ``requested`` held by pods that are being deleted: they still
    occupy the node, but a batch scheduler may plan against it ("future idle"). ``nonzero``
    sums ``nonzero_requests`` of the same pods: scoring uses it, fit uses ``requested``.
    """

    node: dict[str, Any]
    requested: dict[str, Fraction] = field(default_factory=dict)
    pod_count: int = 0
    releasing: dict[str, Fraction] = field(default_factory=dict)
    nonzero: dict[str, Fraction] = field(default_factory=dict)
    # (the node object it was parsed from, its parsed allocatable): parsed once per node version
    parsed: tuple[dict[str, Any], dict[str, Fraction]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def name(self) -> str:
        return cast(str, self.node["metadata"]["name"])

    def allocatable(self) -> dict[str, Fraction]:
        """The node's allocatable (else capacity), parsed; shared, so never change it."""
        if self.parsed is not None and self.parsed[0] is self.node:
            return self.parsed[1]
        status = self.node.get("status") or {}
        source = status.get("allocatable") or status.get("capacity") or {}
        out: dict[str, Fraction] = {}
        _sum_into(out, source)
        self.parsed = (self.node, out)
        return out

    def add(self, requests: dict[str, Fraction], nonzero: dict[str, Fraction], sign: int) -> None:
        """Count (sign 1) or uncount (sign -1) one pod with these amounts."""
        add_amounts(self.requested, requests, sign)
        add_amounts(self.nonzero, nonzero, sign)
        self.pod_count += sign

    def add_pod(self, pod: dict[str, Any]) -> None:
        self.add(pod_requests(pod), nonzero_requests(pod), 1)

    def remove_pod(self, pod: dict[str, Any]) -> None:
        self.add(pod_requests(pod), nonzero_requests(pod), -1)


def resource_reasons(
    pod: dict[str, Any], info: NodeInfo, requests: dict[str, Fraction] | None = None
) -> list[str]:
    """ "Insufficient <resource>" per resource the node cannot supply, plus pod count."""
    allocatable = info.allocatable()
    reasons = []
    if "pods" in allocatable and info.pod_count + 1 > allocatable["pods"]:
        reasons.append(REASON_TOO_MANY_PODS)
    if requests is None:
        requests = pod_requests(pod)
    for name, wanted in sorted(requests.items()):
        if wanted <= 0 or name == "pods":
            continue
        free = allocatable.get(name, Fraction(0)) - info.requested.get(name, Fraction(0))
        if wanted > free:
            reasons.append(f"Insufficient {name}")
    return reasons


def _node_field(node: dict[str, Any], key: str) -> str | None:
    if key == "metadata.name":
        return cast(str | None, node["metadata"]["name"])
    return None


def match_expression(expr: dict[str, Any], value: str | None) -> bool:
    """One NodeSelectorRequirement against a label (or field) value; None means absent."""
    operator = expr.get("operator")
    values = expr.get("values") or []
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt"):
        try:
            left, right = int(value), int(values[0])  # type: ignore[arg-type]  # an absent label (None) raises TypeError: no match
        except (TypeError, ValueError, IndexError):
            return False
        return left > right if operator == "Gt" else left < right
    return False


def match_node_selector_term(term: dict[str, Any], node: dict[str, Any]) -> bool:
    """All expressions of a term must hold; an empty term matches nothing (as upstream)."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    labels = node["metadata"].get("labels") or {}
    if not all(match_expression(e, labels.get(e.get("key"))) for e in expressions):
        return False
    return all(match_expression(f, _node_field(node, f.get("key", ""))) for f in fields)


def matches_node_selector_and_affinity(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    """nodeSelector (exact labels) and requiredDuringSchedulingIgnoredDuringExecution terms (ORed)."""
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if terms is None:
        return True
    return any(match_node_selector_term(term, node) for term in terms)


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """One toleration against one taint, as core/v1 ``Toleration.ToleratesTaint``."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(pod: dict[str, Any], node: dict[str, Any]) -> dict[str, Any] | None:
    """The first NoSchedule/NoExecute taint of ``node`` that no toleration of ``pod`` covers."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in BLOCKING_TAINT_EFFECTS:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return cast(dict[str, Any] | None, taint)
    return None


def taint_reason(taint: dict[str, Any]) -> str:
    return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}"


def tolerates_unschedulable(pod: dict[str, Any] | None) -> bool:
    """Whether the pod tolerates ``node.kubernetes.io/unschedulable:NoSchedule``: kube-scheduler's
    NodeUnschedulable filter lets such a pod (a DaemonSet's) onto a cordoned node."""
    if pod is None:
        return False
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    return any(tolerates(t, UNSCHEDULABLE_TAINT) for t in tolerations)


def node_condition_reasons(node: dict[str, Any], pod: dict[str, Any] | None = None) -> list[str]:
    """Cordoned (unless ``pod`` tolerates it) or not-Ready nodes take no new pods."""
    if (node.get("spec") or {}).get("unschedulable") and not tolerates_unschedulable(pod):
        return [REASON_UNSCHEDULABLE]
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") != "True":
            return [REASON_NOT_READY]
    return []


def fit_reasons(
    pod: dict[str, Any], info: NodeInfo, requests: dict[str, Fraction] | None = None
) -> list[str]:
    """Every reason this node rejects the pod; empty when it fits (``requests``: the pod's,
    when the caller has them already)."""
    reasons = node_condition_reasons(info.node, pod)
    if reasons:
        return reasons
    taint = untolerated_taint(pod, info.node)
    if taint is not None:  # kube-scheduler's filter order: TaintToleration before NodeAffinity
        return [taint_reason(taint)]
    if not matches_node_selector_and_affinity(pod, info.node):
        return [REASON_AFFINITY]
    return resource_reasons(pod, info, requests)


def unschedulable_message(node_count: int, reasons_per_node: Iterable[list[str]]) -> str:
    """The scheduler's FitError text, e.g. "0/3 nodes are available: 1 Insufficient cpu, 2 ..."."""
    if node_count == 0:
        return "no nodes available to schedule pods"
    counts: Counter[str] = Counter()
    for reasons in reasons_per_node:
        counts.update(reasons)
    parts = sorted(f"{count} {reason}" for reason, count in counts.items())
    return f"0/{node_count} nodes are available: {', '.join(parts)}."


def score(info: NodeInfo, nonzero: dict[str, Fraction]) -> Fraction:
    """Least-allocated score: the mean free share of cpu and memory once a pod whose
    ``nonzero_requests`` are ``nonzero`` is placed, counting the node's non-zero requests."""
    allocatable = info.allocatable()
    shares = []
    for name in ("cpu", "memory"):
        capacity = allocatable.get(name, Fraction(0))
        if capacity <= 0:
            continue
        used = info.nonzero.get(name, Fraction(0)) + nonzero.get(name, Fraction(0))
        shares.append(max(Fraction(0), capacity - used) / capacity)
    return sum(shares, Fraction(0)) / len(shares) if shares else Fraction(0)


def select_node(pod: dict[str, Any], infos: list[NodeInfo]) -> tuple[NodeInfo | None, str]:
    """The best feasible node, or None with the Unschedulable message."""
    feasible: list[NodeInfo] = []
    rejections: list[list[str]] = []
    requests = pod_requests(pod)
    for info in infos:
        reasons = fit_reasons(pod, info, requests)
        if reasons:
            rejections.append(reasons)
        else:
            feasible.append(info)
    if not feasible:
        return None, unschedulable_message(len(infos), rejections)
    nonzero = nonzero_requests(pod)
    best = max(feasible, key=lambda i: (score(i, nonzero), -i.pod_count, [-ord(c) for c in i.name]))
    return best, ""
