"""Kubernetes' own gang-scheduling API: ``scheduling.k8s.io/v1beta1`` Workloads and PodGroups,
and the pod's ``spec.schedulingGroup``, validated as kube-apiserver v1.37 does with the feature
gate ``GenericWorkload`` on (``localcluster.features``) and the gates it depends on off.

A ``Workload`` is the template: up to 8 ``podGroupTemplates``, each a DNS-label name and a
scheduling policy that is exactly one of ``basic`` and ``gang`` (``gang.minCount`` >= 1). A
``PodGroup`` is the runtime group the scheduler reads: a scheduling policy, optionally the
``workloadRef`` (workload and template name) it was made from. What the gates kept off
(``CompositePodGroup``, ``TopologyAwareWorkloadScheduling``, ``PodGroupPreemptionPolicy``) would
allow is refused (``parentCompositePodGroupName``, ``compositePodGroupTemplates``,
``schedulingConstraints``, ``preemptionPolicy``), as the real server forbids disabled fields.

Admission (``admit``) gives every new PodGroup the finalizer
``scheduling.k8s.io/podgroup-protection``, as kube-apiserver's ``PodGroupProtection`` plugin
does: a deleted group stays (terminating) until ``controllers.podgroup_protection`` sees no
active pod naming it.

On update only ``gang.minCount`` may change in a policy (elastic gangs); the policy kind, the
workload reference, the priority fields and the templates' names are immutable, and templates
are neither added nor removed. ``status.conditions`` of a PodGroup are checked as metav1
conditions are (type, status, reason, lastTransitionTime).

A pod's ``spec.schedulingGroup`` names exactly one ``podGroupName`` (a DNS subdomain); like the
rest of a pod's spec it cannot change once the pod exists (kube-apiserver's "pod updates may not
change fields other than ..." refusal, without the spec diff it appends).
"""

from __future__ import annotations

import re
from typing import Any

from localcluster.apimachinery.errors import field_cause
from localcluster.controlplane.emulated.admission.validation import is_dns_label, is_dns_subdomain

WORKLOADS = ("scheduling.k8s.io", "workloads")
PODGROUPS = ("scheduling.k8s.io", "podgroups")
KINDS = (WORKLOADS, PODGROUPS)
MAX_TEMPLATES = 8
PROTECTION_FINALIZER = "scheduling.k8s.io/podgroup-protection"
MAX_PRIORITY = 1_000_000_000  # HighestUserDefinablePriority
_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
_UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)
_POLICY_MEMBERS = "`basic`, `gang`"

Cause = dict[str, Any]


def admit(storage_key: tuple[str, str], obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """``PodGroupProtection`` admission: a PodGroup is created with the finalizer
    ``scheduling.k8s.io/podgroup-protection`` (``controllers.podgroup_protection`` removes it
    once no active pod names the group)."""
    if storage_key != PODGROUPS or old is not None:
        return
    meta = obj.setdefault("metadata", {})
    finalizers = meta.get("finalizers")
    if not isinstance(finalizers, list):
        finalizers = meta["finalizers"] = []
    if PROTECTION_FINALIZER not in finalizers:
        finalizers.append(PROTECTION_FINALIZER)


def validate(
    storage_key: tuple[str, str], obj: dict[str, Any], old: dict[str, Any] | None
) -> list[Cause]:
    """The causes of a refused create (``old`` None) or update of a Workload or PodGroup."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [field_cause("spec", "Required value", "FieldValueRequired")]
    old_spec = (old or {}).get("spec") if old is not None else None
    old_spec = old_spec if isinstance(old_spec, dict) else None
    if storage_key == WORKLOADS:
        return _workload_errors(spec, old_spec)
    return _pod_group_errors(spec, old_spec)


def validate_status(obj: dict[str, Any]) -> list[Cause]:
    """A PodGroup status write: its conditions as metav1 validates them."""
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    return _condition_errors(conditions or [], "status.conditions")


def pod_scheduling_group_errors(pod: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """``spec.schedulingGroup`` of a pod being created or updated."""
    spec = pod.get("spec")
    group = spec.get("schedulingGroup") if isinstance(spec, dict) else None
    causes: list[Cause] = []
    if group is not None:
        path = "spec.schedulingGroup.podGroupName"
        name = group.get("podGroupName") if isinstance(group, dict) else None
        if name is None:
            causes.append(
                field_cause(path, "Invalid value: null: must specify one of: `podGroupName`")
            )
        elif not isinstance(name, str) or not is_dns_subdomain(name):
            causes.append(field_cause(path, f'Invalid value: "{name}": {_SUBDOMAIN}'))
    if old is not None:
        before = (old.get("spec") or {}).get("schedulingGroup")
        if before != group:
            causes.append(
                field_cause(
                    "spec",
                    f"Forbidden: pod updates may not change fields other than {_UPDATABLE_POD_SPEC_FIELDS}",
                    "FieldValueForbidden",
                )
            )
    return causes


# ---------------------------------------------------------------------------------- internals

_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def _immutable(path: str, now: Any, before: Any) -> list[Cause]:
    if now == before:
        return []
    return [field_cause(path, f"Invalid value: {_show(now)}: field is immutable")]


def _show(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else ("null" if value is None else str(value))


def _name_errors(value: Any, path: str, label: bool) -> list[Cause]:
    if value in (None, ""):
        return [field_cause(path, "Required value", "FieldValueRequired")]
    ok = isinstance(value, str) and (is_dns_label(value) if label else is_dns_subdomain(value))
    return (
        []
        if ok
        else [
            field_cause(path, f"Invalid value: {_show(value)}: {_LABEL if label else _SUBDOMAIN}")
        ]
    )


def _policy_errors(policy: Any, old: Any, path: str) -> list[Cause]:
    if not isinstance(policy, dict):
        return [field_cause(path, f'Invalid value: "": must specify one of: {_POLICY_MEMBERS}')]
    members = [k for k in ("basic", "gang") if policy.get(k) is not None]
    causes: list[Cause] = []
    if not members:
        causes.append(
            field_cause(path, f'Invalid value: "": must specify one of: {_POLICY_MEMBERS}')
        )
    elif len(members) > 1:
        causes.append(
            field_cause(
                path,
                f"Invalid value: {{{', '.join(members)}}}: must specify exactly one of: {_POLICY_MEMBERS}",
            )
        )
    gang = policy.get("gang")
    if isinstance(gang, dict):
        count = gang.get("minCount")
        if count is None:
            causes.append(
                field_cause(f"{path}.gang.minCount", "Required value", "FieldValueRequired")
            )
        elif not isinstance(count, int) or isinstance(count, bool) or count < 1:
            causes.append(
                field_cause(
                    f"{path}.gang.minCount",
                    f"Invalid value: {count}: must be greater than or equal to 1",
                )
            )
    elif gang is not None:
        causes.append(field_cause(f"{path}.gang", "Invalid value: must be an object"))
    if isinstance(old, dict):
        causes += _immutable(f"{path}.basic", policy.get("basic"), old.get("basic"))
        if (old.get("gang") is None) != (gang is None):
            what = "may not be set" if old.get("gang") is None else "may not be unset"
            causes.append(
                field_cause(f"{path}.gang", f"Forbidden: field {what}", "FieldValueForbidden")
            )
    return causes


def _priority_errors(spec: dict[str, Any], old: dict[str, Any] | None, path: str) -> list[Cause]:
    causes: list[Cause] = []
    pcn = spec.get("priorityClassName")
    if pcn not in (None, ""):
        causes += _name_errors(pcn, f"{path}.priorityClassName", label=False)
    priority = spec.get("priority")
    if priority is not None and (not isinstance(priority, int) or priority > MAX_PRIORITY):
        causes.append(
            field_cause(
                f"{path}.priority",
                f"Invalid value: {priority}: must be less than or equal to {MAX_PRIORITY}",
            )
        )
    if spec.get("preemptionPolicy") is not None:
        causes.append(
            field_cause(
                f"{path}.preemptionPolicy",
                "Forbidden: disabled by feature gate",
                "FieldValueForbidden",
            )
        )
    if spec.get("schedulingConstraints") is not None:
        causes.append(
            field_cause(
                f"{path}.schedulingConstraints",
                "Forbidden: disabled by feature gate",
                "FieldValueForbidden",
            )
        )
    claims = spec.get("resourceClaims")
    if isinstance(claims, list) and len(claims) > 4:
        causes.append(
            field_cause(
                f"{path}.resourceClaims",
                f"Too many: {len(claims)}: must have at most 4 items",
                "FieldValueTooMany",
            )
        )
    if old is not None:
        for key in ("priorityClassName", "priority", "disruptionMode", "resourceClaims"):
            causes += _immutable(f"{path}.{key}", spec.get(key), old.get(key))
    return causes


def _pod_group_errors(spec: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    causes: list[Cause] = []
    if spec.get("parentCompositePodGroupName") is not None:
        causes.append(
            field_cause(
                "spec.parentCompositePodGroupName",
                "Forbidden: disabled by feature gate",
                "FieldValueForbidden",
            )
        )
    ref = spec.get("workloadRef")
    if ref is not None:
        if not isinstance(ref, dict):
            causes.append(field_cause("spec.workloadRef", "Invalid value: must be an object"))
        else:
            causes += _name_errors(
                ref.get("workloadName"), "spec.workloadRef.workloadName", label=False
            )
            causes += _name_errors(
                ref.get("templateName"), "spec.workloadRef.templateName", label=True
            )
    old_policy = old.get("schedulingPolicy") if old is not None else None
    causes += _policy_errors(spec.get("schedulingPolicy"), old_policy, "spec.schedulingPolicy")
    causes += _priority_errors(spec, old, "spec")
    if old is not None:
        causes += _immutable("spec.workloadRef", ref, old.get("workloadRef"))
    return causes


def _workload_errors(spec: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    causes: list[Cause] = []
    ref = spec.get("controllerRef")
    if ref is not None:
        if not isinstance(ref, dict):
            causes.append(field_cause("spec.controllerRef", "Invalid value: must be an object"))
        else:
            for key in ("kind", "name"):
                if not ref.get(key):
                    causes.append(
                        field_cause(
                            f"spec.controllerRef.{key}", "Required value", "FieldValueRequired"
                        )
                    )
                elif "/" in str(ref[key]) or ref[key] in (".", ".."):
                    causes.append(
                        field_cause(
                            f"spec.controllerRef.{key}",
                            f"Invalid value: {_show(ref[key])}: may not contain '/'",
                        )
                    )
            if ref.get("apiGroup"):
                causes += _name_errors(ref["apiGroup"], "spec.controllerRef.apiGroup", label=False)
    if spec.get("compositePodGroupTemplates") is not None:
        causes.append(
            field_cause(
                "spec.compositePodGroupTemplates",
                "Forbidden: disabled by feature gate",
                "FieldValueForbidden",
            )
        )
    templates = spec.get("podGroupTemplates")
    path = "spec.podGroupTemplates"
    if not templates:
        causes.append(
            field_cause(
                "spec",
                'Invalid value: "": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`',
            )
        )
        templates = []
    if not isinstance(templates, list):
        return [*causes, field_cause(path, "Invalid value: must be a list")]
    if len(templates) > MAX_TEMPLATES:
        causes.append(
            field_cause(
                path,
                f"Too many: {len(templates)}: must have at most {MAX_TEMPLATES} items",
                "FieldValueTooMany",
            )
        )
    old_templates = {
        t.get("name"): t
        for t in ((old or {}).get("podGroupTemplates") or [])
        if isinstance(t, dict)
    }
    seen: set[str] = set()
    priorities: set[tuple[Any, Any]] = set()
    for i, template in enumerate(templates):
        tpath = f"{path}[{i}]"
        if not isinstance(template, dict):
            causes.append(field_cause(tpath, "Invalid value: must be an object"))
            continue
        name = template.get("name")
        causes += _name_errors(name, f"{tpath}.name", label=True)
        if isinstance(name, str) and name in seen:
            causes.append(
                field_cause(f"{tpath}.name", f'Duplicate value: "{name}"', "FieldValueDuplicate")
            )
        seen.add(str(name))
        before = old_templates.get(name) if old is not None else None
        if old is not None and before is None:
            causes.append(
                field_cause(
                    tpath, "Forbidden: adding list items is not allowed", "FieldValueForbidden"
                )
            )
        causes += _policy_errors(
            template.get("schedulingPolicy"),
            (before or {}).get("schedulingPolicy"),
            f"{tpath}.schedulingPolicy",
        )
        causes += _priority_errors(template, before, tpath)
        priorities.add((template.get("priorityClassName") or "", template.get("priority")))
    if old is not None:
        gone = [n for n in old_templates if n not in seen]
        if gone:
            causes.append(
                field_cause(
                    path, "Forbidden: removing list items is not allowed", "FieldValueForbidden"
                )
            )
        causes += _immutable("spec.controllerRef", ref, old.get("controllerRef"))
    if len(priorities) > 1:
        causes.append(
            field_cause("spec", "Invalid value: null: detected multiple priority configurations")
        )
    return causes


def _condition_errors(conditions: Any, path: str) -> list[Cause]:
    if not isinstance(conditions, list):
        return [field_cause(path, "Invalid value: must be a list")]
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, cond in enumerate(conditions):
        cpath = f"{path}[{i}]"
        if not isinstance(cond, dict):
            causes.append(field_cause(cpath, "Invalid value: must be an object"))
            continue
        ctype = cond.get("type")
        if not ctype:
            causes.append(field_cause(f"{cpath}.type", "Required value", "FieldValueRequired"))
        elif ctype in seen:
            causes.append(
                field_cause(f"{cpath}.type", f'Duplicate value: "{ctype}"', "FieldValueDuplicate")
            )
        seen.add(str(ctype))
        status = cond.get("status")
        if status not in ("True", "False", "Unknown"):
            causes.append(
                field_cause(
                    f"{cpath}.status",
                    f'Unsupported value: {_show(status)}: supported values: "False", "True", "Unknown"',
                    "FieldValueNotSupported",
                )
            )
        reason = cond.get("reason")
        if not reason:
            causes.append(field_cause(f"{cpath}.reason", "Required value", "FieldValueRequired"))
        elif not isinstance(reason, str) or not _REASON.match(reason) or len(reason) > 1024:
            causes.append(
                field_cause(
                    f"{cpath}.reason",
                    f"Invalid value: {_show(reason)}: a condition reason must start with alphabetic character, "
                    "optionally followed by a string of alphanumeric characters or '_,:', and must end with "
                    "an alphanumeric character or '_'",
                )
            )
        if not cond.get("lastTransitionTime"):
            causes.append(
                field_cause(
                    f"{cpath}.lastTransitionTime",
                    "Required value: must be set",
                    "FieldValueRequired",
                )
            )
        message = cond.get("message")
        if isinstance(message, str) and len(message) > 32768:
            causes.append(
                field_cause(
                    f"{cpath}.message",
                    "Too long: may not be more than 32768 bytes",
                    "FieldValueTooLong",
                )
            )
    return causes
