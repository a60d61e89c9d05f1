"""``POST pods/{name}/eviction``: what kube-apiserver's eviction subresource does.

The body is a ``policy/v1`` (or ``policy/v1beta1``) ``Eviction`` naming the pod, with optional
``deleteOptions``. A pod that is Pending, Succeeded, Failed or already being deleted is
deleted at once, its PodDisruptionBudgets not consulted (a Pending one only if it did not change
since it was read). Otherwise the one PodDisruptionBudget selecting the pod must allow a
disruption: its status, as the disruption controller wrote it, must be up to date with its spec
and show ``disruptionsAllowed`` above 0; the eviction then takes one (``disruptionsAllowed``
lowered, the pod noted in ``disruptedPods``). An unready pod passes without taking one when the
budget's ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow``, or when the budget has all the
healthy pods it wants. More than one budget selecting the pod is refused. A refused eviction is
a 429 (``TooManyRequests``, with a ``DisruptionBudget`` cause saying why), or a 403 when the
budget's status cannot be trusted.

An allowed eviction writes the ``DisruptionTarget`` condition into the pod's status (reason
``EvictionByEvictionAPI``) and then deletes the pod with the request's delete options, so a
pod on a node is deleted gracefully and its kubelet stops it. The answer is a ``Success``
Status with code 201. A dry run (``?dryRun=All`` or ``deleteOptions.dryRun``) writes nothing.

A budget's status is written by the local cluster's disruption controller
(``localcluster.controllers.disruption``, divergence D106); a bare emulator runs none, and its
budgets stay unprocessed. All of it runs under the store's lock, so none of kube-apiserver's
retries on conflicting writes is needed.
"""

from __future__ import annotations

from typing import Any

from localcluster.apimachinery import errors, selectors
from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.gvr import GVR
from localcluster.apimachinery.objects import clone, meta
from localcluster.controlplane.emulated.registry import Registry

PODS: GVR = ("", "v1", "pods")
PDBS: GVR = ("policy", "v1", "poddisruptionbudgets")
API_VERSIONS = ("policy/v1", "policy/v1beta1")
DISRUPTION_TARGET = "DisruptionTarget"
EVICTION_REASON = "EvictionByEvictionAPI"
EVICTION_MESSAGE = "Eviction API: evicting"
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
VIOLATES_BUDGET = "Cannot evict pod as it would violate the pod's disruption budget."
# More disrupted pods than this in a budget's status: too many evictions its controller has
# not confirmed yet (kube-apiserver's MaxDisruptedPodSize).
MAX_DISRUPTED_PODS = 2000
SUCCESS: dict[str, Any] = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Success",
    "code": 201,
}
# kube-apiserver answers this one as a result, not an error: HTTP 201 with a Failure body
MORE_THAN_ONE_BUDGET: dict[str, Any] = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource "
        "does not support."
    ),
    "code": 500,
}


def evict(
    registry: Registry, namespace: str, name: str, body: Any, query_dry_run: list[str]
) -> dict[str, Any]:
    """Evict the pod ``namespace/name`` as ``body`` (an Eviction) asks; the Status to answer
    with code 201, or a ``StatusError``."""
    options = _delete_options(body, namespace, name, query_dry_run)
    with registry.store.lock:
        pod = registry.get_shared(PODS, namespace, name)
        if _can_ignore_budgets(pod):
            chosen = options
            if _enforce_resource_version(pod) and not _resource_version_set(options):
                # the pod must not have become Running (and guarded) since it was read
                chosen = _with_resource_version(options, meta(pod).get("resourceVersion"))
            _add_condition_and_delete(registry, namespace, name, chosen)
            return dict(SUCCESS)
        budgets = _budgets_of(registry, pod)
        if len(budgets) > 1:
            return dict(MORE_THAN_ONE_BUDGET)
        unhealthy_passes = False
        if budgets:
            budget = budgets[0]
            unhealthy_passes = not _ready(pod) and _unhealthy_may_go(budget)
            if not unhealthy_passes:
                _take_disruption(registry, namespace, name, budget, options["dry_run"])
        chosen = options
        if unhealthy_passes:
            # the pod must not have become ready since the budget let it go
            chosen = _with_resource_version(options, meta(pod).get("resourceVersion"))
        try:
            _add_condition_and_delete(registry, namespace, name, chosen)
        except StatusError as e:
            if e.code == 409 and unhealthy_passes and not _resource_version_set(options):
                raise _still_processed(meta(budgets[0]).get("name", "")) from e
            raise
        return dict(SUCCESS)


# ------------------------------------------------------------------ the request


def _delete_options(
    body: Any, namespace: str, name: str, query_dry_run: list[str]
) -> dict[str, Any]:
    """The Eviction's delete options (``grace``, ``propagation``, ``preconditions``, ``dry_run``),
    after checking that it names this pod."""
    if not isinstance(body, dict):
        raise errors.bad_request(f"not a Eviction object: {type(body).__name__}")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if api_version and api_version not in API_VERSIONS:
        raise errors.bad_request(
            f'no kind "{kind or "Eviction"}" is registered for version "{api_version}" in '
            'scheme "pkg/api/legacyscheme/scheme.go:30"'
        )
    if kind and kind != "Eviction":
        version = (api_version or "policy/v1").rpartition("/")[2]
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a Eviction: converting '
            f"(policy.{kind}) to (policy.Eviction): unknown conversion"
        )
    m = body.get("metadata") or {}
    body_namespace = m.get("namespace")
    if body_namespace and body_namespace != namespace:
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    if m.get("name", "") != name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    raw = body.get("deleteOptions")
    given = raw if isinstance(raw, dict) else None
    opts = given or {}
    if opts.get("ignoreStoreReadErrorWithClusterBreakingPotential"):
        cause = errors.field_cause(
            "deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential",
            "Invalid value: true: can not be set for pod eviction, try after removing the option",
        )
        raise errors.invalid("Eviction", "policy", "Eviction", name, [cause])
    dry_run = list(opts.get("dryRun") or [])
    if given is None or not dry_run:
        dry_run = list(query_dry_run)
    elif query_dry_run and query_dry_run != dry_run:
        raise StatusError(
            500,
            "",
            f"Non-matching dry-run options in request and content: "
            f"[{' '.join(query_dry_run)}] and [{' '.join(dry_run)}]",
        )
    propagation = opts.get("propagationPolicy")
    orphan = opts.get("orphanDependents")
    if propagation is None and orphan is not None:
        propagation = "Orphan" if orphan else "Background"
    grace = opts.get("gracePeriodSeconds")
    return {
        "grace": int(grace) if grace is not None else None,
        "propagation": propagation,
        "preconditions": dict(opts.get("preconditions") or {}),
        "dry_run": "All" in dry_run,
    }


def _resource_version_set(options: dict[str, Any]) -> bool:
    return options["preconditions"].get("resourceVersion") is not None


def _with_resource_version(options: dict[str, Any], rv: str | None) -> dict[str, Any]:
    return {**options, "preconditions": {**options["preconditions"], "resourceVersion": rv}}


# ------------------------------------------------------------------ the pod


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _can_ignore_budgets(pod: dict[str, Any]) -> bool:
    """A pod that has ended, has not started, or is going already: deleted without asking
    its budgets."""
    return _phase(pod) in ("Succeeded", "Failed", "Pending") or bool(
        meta(pod).get("deletionTimestamp")
    )


def _enforce_resource_version(pod: dict[str, Any]) -> bool:
    return _phase(pod) not in ("Succeeded", "Failed") and not meta(pod).get("deletionTimestamp")


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _add_condition_and_delete(
    registry: Registry, namespace: str, name: str, options: dict[str, Any]
) -> None:
    """The DisruptionTarget condition on the pod as stored now (a status write), then its
    deletion with ``options``; a dry run only deletes, as a dry run."""
    if not options["dry_run"]:
        latest = registry.get_shared(PODS, namespace, name)
        m = meta(latest)
        pre = options["preconditions"]
        uid, rv = pre.get("uid"), pre.get("resourceVersion")
        if uid and uid != m.get("uid"):
            raise errors.conflict(
                "",
                "Pod",
                name,
                f"the UID in the precondition ({uid}) does not match the UID in record "
                f"({m.get('uid')}). The object might have been deleted and then recreated",
            )
        if rv and rv != m.get("resourceVersion"):
            raise errors.conflict(
                "",
                "Pod",
                name,
                f"the ResourceVersion in the precondition ({rv}) does not match the "
                f"ResourceVersion in record ({m.get('resourceVersion')}). The object might "
                "have been modified",
            )
        updated = registry.update_shared(
            PODS, namespace, name, _with_disruption_target(registry, latest), "status"
        )
        if rv is not None:  # our own write moved it on
            options = _with_resource_version(options, meta(updated).get("resourceVersion"))
    registry.delete_shared(
        PODS,
        namespace,
        name,
        options["grace"],
        options["propagation"],
        options["preconditions"],
        options["dry_run"],
    )


def _with_disruption_target(registry: Registry, pod: dict[str, Any]) -> dict[str, Any]:
    """``pod`` with ``DisruptionTarget=True`` set as ``podutil.UpdatePodCondition`` sets a
    condition: its transition time kept when its status does not change."""
    new = clone(pod)
    status = new.setdefault("status", {})
    conditions = status.setdefault("conditions", [])
    condition: dict[str, Any] = {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": registry.store.now(),
        "reason": EVICTION_REASON,
        "message": EVICTION_MESSAGE,
    }
    for i, old in enumerate(conditions):
        if old.get("type") == DISRUPTION_TARGET:
            if old.get("status") == condition["status"]:
                condition["lastTransitionTime"] = old.get("lastTransitionTime")
            conditions[i] = condition
            break
    else:
        conditions.append(condition)
    return new


# ------------------------------------------------------------------ disruption budgets


def _budgets_of(registry: Registry, pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The PodDisruptionBudgets of the pod's namespace whose selector selects it (an empty
    selector selects every pod, a missing one none)."""
    m = meta(pod)
    labels = m.get("labels") or {}
    out = []
    for budget in registry.list(PDBS, m.get("namespace"))[0]:
        spec = budget.get("spec") or {}
        if "selector" not in spec or spec["selector"] is None:
            continue
        selector = spec["selector"]
        empty = not (selector.get("matchLabels") or selector.get("matchExpressions"))
        if empty or selectors.label_selector_matches(selector, labels):
            out.append(budget)
    return out


def _status(budget: dict[str, Any]) -> dict[str, Any]:
    return budget.get("status") or {}


def _unhealthy_may_go(budget: dict[str, Any]) -> bool:
    """An unready pod leaves without taking a disruption: the budget says AlwaysAllow, or it
    has every healthy pod it wants (the application is not disrupted now)."""
    if (budget.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
        return True
    status = _status(budget)
    desired = int(status.get("desiredHealthy") or 0)
    return int(status.get("currentHealthy") or 0) >= desired > 0


def _refusal(code: int, reason: str, message: str, details: dict[str, Any]) -> StatusError:
    return StatusError(code, reason, message, details, retry_after=details.get("retryAfterSeconds"))


def _cause(message: str) -> dict[str, Any]:
    return {"reason": DISRUPTION_BUDGET_CAUSE, "message": message}


def _still_processed(name: str) -> StatusError:
    """429: the budget's controller has not caught up with it (retry in 10 s)."""
    return _refusal(
        429,
        "TooManyRequests",
        VIOLATES_BUDGET,
        {
            "retryAfterSeconds": 10,
            "causes": [
                _cause(f"The disruption budget {name} is still being processed by the server.")
            ],
        },
    )


def _forbidden(name: str, why: str, cause: str) -> StatusError:
    e = errors.forbidden("policy", "poddisruptionbudget", name, why)
    e.status["details"]["causes"] = [_cause(cause)]
    return e


def _take_disruption(
    registry: Registry, namespace: str, pod_name: str, budget: dict[str, Any], dry_run: bool
) -> None:
    """Refuse the eviction unless the budget allows a disruption; take one (written unless
    ``dry_run``)."""
    m = meta(budget)
    name = m.get("name", "")
    status = _status(budget)
    if int(status.get("observedGeneration") or 0) < int(m.get("generation") or 0):
        raise _still_processed(name)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise _forbidden(
            name,
            "pdb disruptions allowed is negative",
            f"The disruption budget {name} does not allow evicting pods currently: pdb "
            "disruptions allowed is negative",
        )
    disrupted = dict(status.get("disruptedPods") or {})
    if len(disrupted) > MAX_DISRUPTED_PODS:
        raise _forbidden(
            name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            f"The disruption budget {name} does not allow evicting pods currently: too many "
            "pending evictions not confirmed by PDB controller",
        )
    if allowed == 0:
        raise _refusal(
            429, "TooManyRequests", VIOLATES_BUDGET, {"causes": [_cause(_why_none(budget))]}
        )
    new = clone(budget)
    new_status = new.setdefault("status", {})
    new_status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        _set_condition(registry, new_status, "False", "InsufficientPods")
    if dry_run:
        return
    disrupted[pod_name] = registry.store.now()
    new_status["disruptedPods"] = disrupted
    registry.update_shared(PDBS, namespace, name, new, "status")


def _why_none(budget: dict[str, Any]) -> str:
    """Why a budget allows no disruption, in kube-apiserver's words."""
    name = meta(budget).get("name", "")
    status = _status(budget)
    condition = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"),
        None,
    )
    refused = condition is not None and condition.get("status") == "False"
    message = (condition or {}).get("message") or ""
    desired = int(status.get("desiredHealthy") or 0)
    current = int(status.get("currentHealthy") or 0)
    if refused and message and condition and condition.get("reason") == "SyncFailed":
        return (
            f"The disruption budget {name} does not allow evicting pods currently because it "
            f"failed sync: {message}"
        )
    if current <= desired:
        return (
            f"The disruption budget {name} needs {desired} healthy pods and has {current} currently"
        )
    if refused and message and condition:
        return (
            f"The disruption budget {name} does not allow evicting pods currently "
            f"({condition.get('reason')}): {message}"
        )
    return f"The disruption budget {name} does not allow evicting pods currently"


def _set_condition(registry: Registry, status: dict[str, Any], value: str, reason: str) -> None:
    """``DisruptionAllowed`` as ``meta.SetStatusCondition`` sets it (the transition time moves
    only with the status)."""
    conditions = list(status.get("conditions") or [])
    condition = {
        "type": "DisruptionAllowed",
        "status": value,
        "observedGeneration": int(status.get("observedGeneration") or 0),
        "lastTransitionTime": registry.store.now(),
        "reason": reason,
        "message": "",
    }
    for i, old in enumerate(conditions):
        if old.get("type") == "DisruptionAllowed":
            if old.get("status") == value:
                condition["lastTransitionTime"] = old.get("lastTransitionTime")
            conditions[i] = condition
            break
    else:
        conditions.append(condition)
    status["conditions"] = conditions


__all__ = ["evict"]
