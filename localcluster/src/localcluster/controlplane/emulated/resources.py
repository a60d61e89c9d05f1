"""Resource types the emulator serves: the built-in table and the ``ResourceType`` record.

A ``ResourceType`` is one REST collection (group, plural) with the versions it is served at.
Objects are stored once per ``storage_key`` (group, plural), at the storage version; every served
version reads the same JSON with ``apiVersion`` rewritten. CRDs add ``ResourceType`` records at
run time (see ``crds``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass
class ResourceType:
    group: str
    versions: list[str]
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    subresources: tuple[str, ...] = ()
    generation: bool = False  # whether metadata.generation is maintained
    # metadata.name rule: "subdomain" (RFC 1123), "label" (RFC 1123), "dns1035" (RFC 1035 label),
    # "path" (a path segment) or "crd" (<plural>.<group>, checked by validate_crd)
    name_rule: str = "subdomain"
    crd: dict[str, Any] | None = None  # the CRD object for custom resources
    # the version objects are stored at (a CRD's storage version), when not versions[0]
    storage_version: str | None = None
    verbs: list[str] = field(default_factory=lambda: list(ALL_VERBS))

    @property
    def storage_key(self) -> tuple[str, str]:
        return (self.group, self.plural)

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def is_custom(self) -> bool:
        return self.crd is not None

    def api_version(self, version: str | None = None) -> str:
        v = version or self.versions[0]
        return f"{self.group}/{v}" if self.group else v

    @property
    def stored_api_version(self) -> str:
        """The apiVersion objects are stored with; a read at any served version rewrites it
        (conversion ``None``)."""
        return self.api_version(self.storage_version)

    @property
    def list_kind(self) -> str:
        return self.kind + "List"


def _rt(
    group: str, versions: list[str], plural: str, kind: str, namespaced: bool = True, **kw: Any
) -> ResourceType:
    return ResourceType(
        group, versions, plural, kw.pop("singular", kind.lower()), kind, namespaced, **kw
    )


def _workload(plural: str, kind: str, short_name: str, scalable: bool = True) -> ResourceType:
    """An ``apps/v1`` workload: in category "all", with status (and scale), generation kept."""
    return _rt(
        "apps",
        ["v1"],
        plural,
        kind,
        short_names=[short_name],
        categories=["all"],
        subresources=("status", "scale") if scalable else ("status",),
        generation=True,
    )


def _review(group: str, plural: str, kind: str, namespaced: bool = False) -> ResourceType:
    """A create-only review kind (access, rules and token reviews); never stored."""
    return _rt(group, ["v1"], plural, kind, namespaced, verbs=["create"])


def builtin_types() -> list[ResourceType]:
    """The built-in kinds, in discovery order."""
    status = ("status",)
    return [
        _rt(
            "",
            ["v1"],
            "namespaces",
            "Namespace",
            False,
            short_names=["ns"],
            subresources=status,
            name_rule="label",
        ),
        _rt(
            "",
            ["v1"],
            "pods",
            "Pod",
            short_names=["po"],
            categories=["all"],
            subresources=("status", "log", "binding", "eviction"),
            generation=True,  # kept for pods since 1.35 (PodObservedGenerationTracking)
        ),
        _rt(
            "",
            ["v1"],
            "services",
            "Service",
            short_names=["svc"],
            categories=["all"],
            subresources=status,
            name_rule="dns1035",
        ),
        _rt("", ["v1"], "endpoints", "Endpoints", short_names=["ep"], singular="endpoints"),
        _rt("", ["v1"], "events", "Event", short_names=["ev"]),
        _rt("", ["v1"], "configmaps", "ConfigMap", short_names=["cm"]),
        _rt("", ["v1"], "secrets", "Secret"),
        _rt(
            "",
            ["v1"],
            "serviceaccounts",
            "ServiceAccount",
            short_names=["sa"],
            subresources=("token",),
        ),
        _rt(
            "",
            ["v1"],
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            short_names=["pvc"],
            subresources=status,
        ),
        _rt("", ["v1"], "nodes", "Node", False, short_names=["no"], subresources=status),
        _rt(
            "",
            ["v1"],
            "resourcequotas",
            "ResourceQuota",
            short_names=["quota"],
            subresources=status,
        ),
        _rt("coordination.k8s.io", ["v1"], "leases", "Lease"),
        _rt("events.k8s.io", ["v1"], "events", "Event", short_names=["ev"]),
        _workload("deployments", "Deployment", "deploy"),
        _workload("replicasets", "ReplicaSet", "rs"),
        _workload("statefulsets", "StatefulSet", "sts"),
        _workload("daemonsets", "DaemonSet", "ds", scalable=False),
        _rt(
            "batch", ["v1"], "jobs", "Job", categories=["all"], subresources=status, generation=True
        ),
        _rt("rbac.authorization.k8s.io", ["v1"], "roles", "Role", name_rule="path"),
        _rt("rbac.authorization.k8s.io", ["v1"], "rolebindings", "RoleBinding", name_rule="path"),
        _rt(
            "rbac.authorization.k8s.io",
            ["v1"],
            "clusterroles",
            "ClusterRole",
            False,
            name_rule="path",
        ),
        _rt(
            "rbac.authorization.k8s.io",
            ["v1"],
            "clusterrolebindings",
            "ClusterRoleBinding",
            False,
            name_rule="path",
        ),
        _review("authentication.k8s.io", "tokenreviews", "TokenReview"),
        _review("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview"),
        _review("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview"),
        _review("authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview"),
        _review("authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview"),
        _review(
            "authorization.k8s.io",
            "localsubjectaccessreviews",
            "LocalSubjectAccessReview",
            namespaced=True,
        ),
        _rt(
            "scheduling.k8s.io",
            ["v1"],
            "priorityclasses",
            "PriorityClass",
            False,
            short_names=["pc"],
        ),
        # Kubernetes' own gang scheduling (GenericWorkload; ``podgroups`` module)
        _rt("scheduling.k8s.io", ["v1beta1"], "workloads", "Workload", generation=True),
        _rt(
            "scheduling.k8s.io",
            ["v1beta1"],
            "podgroups",
            "PodGroup",
            subresources=status,
            generation=True,
        ),
        _rt(
            "policy",
            ["v1", "v1beta1"],
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            short_names=["pdb"],
            subresources=status,
            generation=True,
        ),
        _rt(
            "apiextensions.k8s.io",
            ["v1"],
            "customresourcedefinitions",
            "CustomResourceDefinition",
            False,
            short_names=["crd", "crds"],
            subresources=status,
            generation=True,
            name_rule="crd",
        ),
    ]
