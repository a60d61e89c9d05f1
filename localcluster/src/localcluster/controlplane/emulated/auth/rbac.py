"""The RBAC authorizer: Roles, ClusterRoles and their bindings, read from the registry.

For a request in namespace N, the rules that apply to a user are those of every ClusterRole
bound to them by a ClusterRoleBinding, then (when N is set) those of every Role or ClusterRole
bound to them by a RoleBinding in N. The first rule that allows the request wins and the
reason names it (``RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to ...``). A
denial has an empty reason unless a binding pointed at a missing role, in which case the reason
lists those errors, as upstream's ``RBAC: clusterrole.rbac.authorization.k8s.io "x" not found``.
Rules match as ``rbac/v1`` defines: ``*`` wildcards for verbs, groups, resources and
non-resource URLs, ``*/sub`` for any resource's subresource, ``resourceNames`` restricting
named requests, and a trailing ``*`` as a prefix match on non-resource URLs. Reads use the
registry's stored objects (immutable, never copied), so a check costs a few dict lookups.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from localcluster.apimachinery.errors import StatusError
from localcluster.apimachinery.objects import meta
from localcluster.controlplane.emulated.auth.requestinfo import RequestAttributes
from localcluster.controlplane.emulated.auth.user import UserInfo, split_service_account_username
from localcluster.controlplane.emulated.registry import Registry

RBAC_GROUP = "rbac.authorization.k8s.io"
ROLES = (RBAC_GROUP, "v1", "roles")
ROLE_BINDINGS = (RBAC_GROUP, "v1", "rolebindings")
CLUSTER_ROLES = (RBAC_GROUP, "v1", "clusterroles")
CLUSTER_ROLE_BINDINGS = (RBAC_GROUP, "v1", "clusterrolebindings")


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


# ---------------------------------------------------------------------- rule matching
def _has(values: list[Any] | None, wanted: str) -> bool:
    values = values or []
    return "*" in values or wanted in values


def resource_matches(rule: dict[str, Any], combined: str, subresource: str) -> bool:
    for resource in rule.get("resources") or []:
        if resource in ("*", combined):
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def non_resource_url_matches(rule: dict[str, Any], path: str) -> bool:
    for url in rule.get("nonResourceURLs") or []:
        if url in ("*", path) or (url.endswith("*") and path.startswith(url[:-1])):
            return True
    return False


def rule_allows(attrs: RequestAttributes, rule: dict[str, Any]) -> bool:
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        return non_resource_url_matches(rule, attrs.path)
    names = rule.get("resourceNames") or []
    return (
        _has(rule.get("apiGroups"), attrs.api_group)
        and resource_matches(rule, attrs.combined_resource, attrs.subresource)
        and (not names or attrs.name in names)
    )


# ---------------------------------------------------------------------- subjects
def applies_to(user: UserInfo, subject: dict[str, Any], binding_namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return bool(namespace) and split_service_account_username(user.name) == (namespace, name)
    return False


def describe_subject(subject: dict[str, Any], binding_namespace: str) -> str:
    if subject.get("kind") == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return f'ServiceAccount "{subject.get("name")}/{namespace}"'
    return f'{subject.get("kind")} "{subject.get("name")}"'


# ---------------------------------------------------------------------- the resolver
class RuleResolver:
    """Finds the rules that apply to a user in a namespace, with where each comes from."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def _role(
        self, ref: dict[str, Any], namespace: str
    ) -> tuple[dict[str, Any] | None, str | None]:
        kind, name = ref.get("kind"), ref.get("name") or ""
        if kind == "ClusterRole":
            gvr, ns, singular = CLUSTER_ROLES, None, "clusterrole"
        elif kind == "Role" and namespace:
            gvr, ns, singular = ROLES, namespace, "role"
        else:
            return None, f'unsupported role reference kind: "{kind}"'
        try:
            return self._registry.get_shared(gvr, ns, name), None
        except StatusError:
            return None, f'{singular}.{RBAC_GROUP} "{name}" not found'

    def visit(
        self, user: UserInfo, namespace: str
    ) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
        """Yield ``(source, rule, None)`` for every applying rule, or ``("", None, error)``."""
        bindings, _, _, _ = self._registry.list_page(CLUSTER_ROLE_BINDINGS)
        sources = [("ClusterRoleBinding", b, "") for b in bindings]
        if namespace:
            bindings, _, _, _ = self._registry.list_page(ROLE_BINDINGS, namespace)
            sources += [("RoleBinding", b, namespace) for b in bindings]
        for kind, binding, binding_ns in sources:
            subject = next(
                (s for s in binding.get("subjects") or [] if applies_to(user, s, binding_ns)),
                None,
            )
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            role, error = self._role(ref, binding_ns)
            if role is None:
                yield "", None, error
                continue
            name = meta(binding).get("name", "")
            label = f"{name}/{binding_ns}" if binding_ns else name
            source = (
                f'{kind} "{label}" of {ref.get("kind")} "{ref.get("name")}" '
                f"to {describe_subject(subject, binding_ns)}"
            )
            for rule in role.get("rules") or []:
                yield source, rule, None

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[dict[str, Any]], list[str]]:
        rules, errors = [], []
        for _, rule, error in self.visit(user, namespace):
            if rule is not None:
                rules.append(rule)
            elif error:
                errors.append(error)
        return rules, errors


class RBACAuthorizer:
    def __init__(self, registry: Registry) -> None:
        self.resolver = RuleResolver(registry)

    def authorize(self, user: UserInfo, attrs: RequestAttributes) -> Decision:
        errors: list[str] = []
        for source, rule, error in self.resolver.visit(user, attrs.namespace):
            if rule is not None and rule_allows(attrs, rule):
                return Decision(True, f"RBAC: allowed by {source}")
            if error:
                errors.append(error)
        if not errors:
            return Decision(False)
        text = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        return Decision(False, f"RBAC: {text}")
