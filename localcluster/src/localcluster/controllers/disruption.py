"""The disruption controller: the status of every PodDisruptionBudget, which the eviction
subresource reads.

As kube-controller-manager's: a budget's pods are those of its namespace its selector selects
(an empty selector every pod, none without one). ``minAvailable`` as a number wants that many
healthy pods out of the pods there are; a percentage, or ``maxUnavailable``, is taken of the
pods their controllers want (the ``spec.replicas`` of the ReplicaSets, Deployments and
StatefulSets that own them, rounded up). A pod is healthy when it is Ready, not being deleted
and not among the budget's ``disruptedPods`` (pods the eviction subresource let go, forgotten
after two minutes if they were not deleted). ``disruptionsAllowed`` is the healthy pods beyond
those wanted (none while no pod is expected); the ``DisruptionAllowed`` condition says whether
there is one, and ``observedGeneration`` that the status is up to date with the spec. A budget
whose count cannot be made (a pod whose controller is none of those) gets no disruption and the
condition ``SyncFailed`` with the reason.

A pod that kept a ``DisruptionTarget=True`` condition for two minutes without being deleted or
ending (an eviction that did not go through) gets it set back to False, unless its kubelet set it.

Not done: the events (``NoPods``, ``CalculateExpectedPodCountFailed``, ``UnmanagedPods``,
``NotDeleted``), and the scale of any other controller of the pods, a custom resource's
(divergence D106).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.objects import format_time, parse_time
from localcluster.apimachinery.selectors import label_selector_matches
from localcluster.client.api import ClusterClient
from localcluster.client.informer import PODS, Informer, object_key, start_informers
from localcluster.client.keyqueue import KeyQueue, run_worker
from localcluster.controllers.ownership import controller_ref

logger = logging.getLogger(__name__)

PDBS = ("policy", "v1", "poddisruptionbudgets")
REPLICA_SETS = ("apps", "v1", "replicasets")
DEPLOYMENTS = ("apps", "v1", "deployments")
STATEFUL_SETS = ("apps", "v1", "statefulsets")
COMPONENT = "disruption-controller"
# How long a pod the eviction subresource let go stays out of the healthy count
DELETION_TIMEOUT = 120.0
# How long a DisruptionTarget condition may stay on a pod that is neither deleted nor ended
STALE_DISRUPTION_TIMEOUT = 120.0
DISRUPTION_TARGET = "DisruptionTarget"
TERMINATION_BY_KUBELET = "TerminationByKubelet"


class SyncFailed(Exception):
    """The budget's count cannot be made; the message goes on its condition."""


def selects(budget: dict[str, Any], labels: dict[str, Any]) -> bool:
    """Whether the budget's selector selects a pod with ``labels``."""
    selector = (budget.get("spec") or {}).get("selector")
    if selector is None:
        return False
    if not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return True
    return label_selector_matches(selector, labels)


def _labels(pod: dict[str, Any] | None) -> dict[str, Any]:
    return ((pod or {}).get("metadata") or {}).get("labels") or {}


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _deleting(pod: dict[str, Any]) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def scaled(value: Any, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` rounding up."""
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%"):
        raise SyncFailed("invalid value for IntOrString: invalid type: string is not a percentage")
    try:
        percent = int(text[:-1])
    except ValueError as err:
        raise SyncFailed(f'invalid value "{text}": {err}') from err
    return math.ceil(percent * total / 100)


class DisruptionController:
    def __init__(self, client: ClusterClient, clock: Callable[[], float] = time.time) -> None:
        self._client = client
        self._clock = clock
        self._queue = KeyQueue()
        self._stale = KeyQueue()
        self._budgets = Informer(client, PDBS, self._on_budget)
        self._pods = Informer(client, PODS, self._on_pod)

    def start(self, stop_event: threading.Event) -> list[threading.Thread]:
        threads = start_informers((self._budgets, self._pods), stop_event)
        threads.append(run_worker(self._queue, self.sync, stop_event, COMPONENT))
        threads.append(run_worker(self._stale, self.sync_stale, stop_event, f"{COMPONENT}-stale"))
        return threads

    # -- event handlers ---------------------------------------------------------------

    def _on_budget(self, _event: str, budget: dict[str, Any], _old: dict[str, Any] | None) -> None:
        self._queue.add(object_key(budget))

    def _on_pod(self, event: str, pod: dict[str, Any], old: dict[str, Any] | None) -> None:
        namespace = pod["metadata"].get("namespace", "")
        for budget in self._budgets.in_namespace(namespace):
            if selects(budget, _labels(pod)) or (old is not None and selects(budget, _labels(old))):
                self._queue.add(object_key(budget))
        if event != "DELETED" and self._stale_after(pod) is not None:
            self._stale.add(object_key(pod))

    # -- budgets ----------------------------------------------------------------------

    def sync(self, key: str) -> float | None:
        """Write the budget's status; the seconds until a disrupted pod is forgotten, if any."""
        namespace, name = key.split("/", 1)
        try:
            budget = self._client.get(PDBS, namespace, name)
        except StatusError as err:
            if err.code == 404:
                return None
            raise
        pods = [p for p in self._pods.in_namespace(namespace) if selects(budget, _labels(p))]
        now = self._clock()
        try:
            expected, desired = self._expected_pods(budget, pods)
        except SyncFailed as err:
            self._fail_safe(budget, str(err))
            return None
        disrupted, recheck = self._disrupted_pods(budget, pods, now)
        healthy = sum(
            1
            for p in pods
            if not _deleting(p) and p["metadata"]["name"] not in disrupted and _ready(p)
        )
        self._update_status(budget, healthy, desired, expected, disrupted)
        return None if recheck is None else max(recheck - now, 0.0)

    def _expected_pods(self, budget: dict[str, Any], pods: list[dict[str, Any]]) -> tuple[int, int]:
        """(expected pods, healthy pods wanted)."""
        spec = budget.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected = self._expected_scale(pods)
            return expected, max(expected - scaled(spec["maxUnavailable"], expected), 0)
        minimum = spec.get("minAvailable")
        if isinstance(minimum, int):
            return len(pods), minimum
        if minimum is not None:
            expected = self._expected_scale(pods)
            return expected, scaled(minimum, expected)
        return 0, 0

    def _expected_scale(self, pods: list[dict[str, Any]]) -> int:
        """The replicas the pods' controllers want, each controller once; a pod with no
        controller adds nothing, one whose controller is unknown fails the count."""
        scales: dict[str, int] = {}
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None or ref.get("uid") in scales:
                continue
            found = self._controller_scale(ref, pod["metadata"].get("namespace", ""))
            if found is None:
                raise SyncFailed(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            scales[found[0]] = found[1]
        return sum(scales.values())

    def _owner(self, gvr: tuple[str, str, str], namespace: str, ref: dict[str, Any]) -> Any:
        try:
            obj = self._client.get(gvr, namespace, ref.get("name", ""), shared=True)
        except StatusError:
            return None
        return obj if obj["metadata"].get("uid") == ref.get("uid") else None

    def _controller_scale(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        """(uid, replicas) of the workload controller ``ref`` names: a ReplicaSet (its
        Deployment's, when one controls it), a StatefulSet."""
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        kind = ref.get("kind")
        if kind == "ReplicaSet" and group in ("apps", "extensions"):
            rs = self._owner(REPLICA_SETS, namespace, ref)
            if rs is None:
                return None
            owner = controller_ref(rs)
            if owner is not None and owner.get("kind") == "Deployment":
                deployment = self._owner(DEPLOYMENTS, namespace, owner)
                if deployment is not None:
                    return deployment["metadata"]["uid"], _replicas(deployment)
            return rs["metadata"]["uid"], _replicas(rs)
        if kind == "StatefulSet" and group == "apps":
            sts = self._owner(STATEFUL_SETS, namespace, ref)
            return None if sts is None else (sts["metadata"]["uid"], _replicas(sts))
        return None

    def _disrupted_pods(
        self, budget: dict[str, Any], pods: list[dict[str, Any]], now: float
    ) -> tuple[dict[str, str], float | None]:
        """The disrupted pods still expected to go, and when the first of them is forgotten."""
        noted = (budget.get("status") or {}).get("disruptedPods") or {}
        kept: dict[str, str] = {}
        recheck: float | None = None
        for pod in pods:
            name = pod["metadata"]["name"]
            if _deleting(pod) or name not in noted:
                continue
            expected_deletion = (parse_time(noted[name]) or 0.0) + DELETION_TIMEOUT
            if expected_deletion < now:
                continue
            kept[name] = noted[name]
            recheck = expected_deletion if recheck is None else min(recheck, expected_deletion)
        return kept, recheck

    def _update_status(
        self,
        budget: dict[str, Any],
        healthy: int,
        desired: int,
        expected: int,
        disrupted: dict[str, str],
    ) -> None:
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        status = budget.get("status") or {}
        generation = int(budget["metadata"].get("generation") or 0)
        if (
            status.get("currentHealthy") == healthy
            and status.get("desiredHealthy") == desired
            and status.get("expectedPods") == expected
            and status.get("disruptionsAllowed") == allowed
            and (status.get("disruptedPods") or {}) == disrupted
            and status.get("observedGeneration") == generation
            and _conditions_up_to_date(status, generation)
        ):
            return
        new_status: dict[str, Any] = {"observedGeneration": generation}
        if disrupted:
            new_status["disruptedPods"] = disrupted
        new_status.update(
            {
                "disruptionsAllowed": allowed,
                "currentHealthy": healthy,
                "desiredHealthy": desired,
                "expectedPods": expected,
            }
        )
        sufficient = allowed > 0
        new_status["conditions"] = _set_condition(
            status.get("conditions") or [],
            "True" if sufficient else "False",
            "SufficientPods" if sufficient else "InsufficientPods",
            "",
            generation,
            self._clock(),
        )
        self._write(budget, new_status)

    def _fail_safe(self, budget: dict[str, Any], why: str) -> None:
        """No disruption allowed, and why on the condition."""
        status = dict(budget.get("status") or {})
        status["disruptionsAllowed"] = 0
        for count in ("currentHealthy", "desiredHealthy", "expectedPods"):
            status.setdefault(count, 0)  # a typed status always has them
        status["conditions"] = _set_condition(
            status.get("conditions") or [],
            "False",
            "SyncFailed",
            why,
            int(status.get("observedGeneration") or 0),
            self._clock(),
        )
        self._write(budget, status)

    def _write(self, budget: dict[str, Any], status: dict[str, Any]) -> None:
        m = budget["metadata"]
        self._client.update(
            PDBS, m["namespace"], m["name"], {**budget, "status": status}, subresource="status"
        )

    # -- stale DisruptionTarget conditions -------------------------------------------------

    def _stale_after(self, pod: dict[str, Any]) -> float | None:
        """Seconds until the pod's DisruptionTarget condition is stale (0: it is); None when
        it has none that can be."""
        if _deleting(pod):
            return None
        status = pod.get("status") or {}
        if status.get("phase") in ("Succeeded", "Failed"):
            return None
        for condition in status.get("conditions") or []:
            if condition.get("type") != DISRUPTION_TARGET:
                continue
            if (
                condition.get("status") != "True"
                or condition.get("reason") == TERMINATION_BY_KUBELET
            ):
                return None
            since = parse_time(condition.get("lastTransitionTime") or "") or 0.0
            return max(STALE_DISRUPTION_TIMEOUT - (self._clock() - since), 0.0)
        return None

    def sync_stale(self, key: str) -> float | None:
        namespace, name = key.split("/", 1)
        try:
            pod = self._client.get(PODS, namespace, name)
        except StatusError as err:
            if err.code == 404:
                return None
            raise
        wait = self._stale_after(pod)
        if wait is None:
            return None
        if wait > 0:
            return wait
        status = pod.setdefault("status", {})
        conditions = status.get("conditions") or []
        status["conditions"] = [
            {
                "type": DISRUPTION_TARGET,
                "observedGeneration": int(pod["metadata"].get("generation") or 0),
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": format_time(self._clock()),
            }
            if c.get("type") == DISRUPTION_TARGET
            else c
            for c in conditions
        ]
        self._client.update(PODS, namespace, name, pod, subresource="status")
        logger.info("reset the stale DisruptionTarget condition of %s to False", key)
        return None


def _replicas(workload: dict[str, Any]) -> int:
    return int((workload.get("spec") or {}).get("replicas", 1))


def _conditions_up_to_date(status: dict[str, Any], generation: int) -> bool:
    """``pdbhelper.ConditionsAreUpToDate``."""
    condition = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None
    )
    if condition is None or status.get("observedGeneration") != generation:
        return False
    wanted = (
        ("True", "SufficientPods")
        if int(status.get("disruptionsAllowed") or 0) > 0
        else ("False", "InsufficientPods")
    )
    return (condition.get("status"), condition.get("reason")) == wanted


def _set_condition(
    conditions: list[dict[str, Any]],
    value: str,
    reason: str,
    message: str,
    observed_generation: int,
    now: float,
) -> list[dict[str, Any]]:
    """``meta.SetStatusCondition`` of ``DisruptionAllowed``: its transition time moves only
    with its status."""
    out = [dict(c) for c in conditions]
    for condition in out:
        if condition.get("type") == "DisruptionAllowed":
            if condition.get("status") != value:
                condition["lastTransitionTime"] = format_time(now)
            condition.update({"status": value, "reason": reason, "message": message})
            condition.pop("observedGeneration", None)
            if observed_generation:  # omitted when 0
                condition["observedGeneration"] = observed_generation
            return out
    condition = {"type": "DisruptionAllowed", "status": value}
    if observed_generation:
        condition["observedGeneration"] = observed_generation
    condition.update({"lastTransitionTime": format_time(now), "reason": reason, "message": message})
    out.append(condition)
    return out
