"""Defaults and validation of ``apps/v1`` Deployments and ReplicaSets, as the API server does.

Defaults (``SetDefaults_Deployment`` / ``_ReplicaSet``): one replica; for Deployments the
``RollingUpdate`` strategy with ``maxSurge`` and ``maxUnavailable`` of 25%, a revision history
of 10 and a progress deadline of 600 s; the pod template gets the pod defaults. Validation: a
selector that is not empty and matches the template's labels, immutable once set, a
non-negative replica count, ``restartPolicy: Always``, and for RollingUpdate a surge and an
unavailability that are not both zero.
"""

from __future__ import annotations

import re
from typing import Any

from localcluster.apimachinery.errors import field_cause
from localcluster.apimachinery.selectors import label_selector_matches
from localcluster.controlplane.emulated.admission.defaults import pod_spec_defaults

KINDS = (("apps", "deployments"), ("apps", "replicasets"))
DEFAULT_SURGE = DEFAULT_UNAVAILABLE = "25%"
_PERCENT = re.compile(r"^(\d+)%$")


def apply_defaults(storage_key: tuple[str, str], obj: dict[str, Any]) -> None:
    obj.setdefault("status", {})  # a struct in Go: encoded even when empty
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("replicas", 1)
    if storage_key == ("apps", "deployments"):
        strategy = spec.setdefault("strategy", {})
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            rolling.setdefault("maxUnavailable", DEFAULT_UNAVAILABLE)
            rolling.setdefault("maxSurge", DEFAULT_SURGE)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        pod_spec_defaults(template["spec"])


def _int_or_percent_ok(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, str) and bool(_PERCENT.match(value))


def _is_zero(value: object) -> bool:
    return value in (0, "0%")


def validate(obj: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, Any]]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [field_cause("spec", "Required value", "FieldValueRequired")]
    causes: list[dict[str, Any]] = []
    replicas = spec.get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        causes.append(
            field_cause(
                "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0"
            )
        )
    selector = spec.get("selector")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not isinstance(selector, dict) or not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        causes.append(field_cause("spec.selector", "Required value", "FieldValueRequired"))
    elif not label_selector_matches(selector, labels):
        causes.append(
            field_cause(
                "spec.template.metadata.labels",
                f"Invalid value: {labels}: `selector` does not match template `labels`",
            )
        )
    if old is not None and (old.get("spec") or {}).get("selector") != selector:
        causes.append(
            field_cause("spec.selector", f"Invalid value: {selector}: field is immutable")
        )
    policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy", "Always")
    if policy != "Always":
        causes.append(
            field_cause(
                "spec.template.spec.restartPolicy",
                f'Unsupported value: "{policy}": supported values: "Always"',
                "FieldValueNotSupported",
            )
        )
    rolling = (spec.get("strategy") or {}).get("rollingUpdate")
    if isinstance(rolling, dict):
        for key in ("maxSurge", "maxUnavailable"):
            if not _int_or_percent_ok(rolling.get(key)):
                causes.append(
                    field_cause(
                        f"spec.strategy.rollingUpdate.{key}",
                        f"Invalid value: {rolling.get(key)!r}: must be a non-negative integer or percentage",
                    )
                )
        if _is_zero(rolling.get("maxSurge")) and _is_zero(rolling.get("maxUnavailable")):
            causes.append(
                field_cause(
                    "spec.strategy.rollingUpdate.maxUnavailable",
                    "Invalid value: 0: may not be 0 when `maxSurge` is 0",
                )
            )
    return causes
