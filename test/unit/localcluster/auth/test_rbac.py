"""RBAC rule matching and the rule resolver over a real registry."""

import pytest

from localcluster.controlplane.emulated import Registry
from localcluster.controlplane.emulated.auth.authorizer import Authorizer, forbidden
from localcluster.controlplane.emulated.auth.rbac import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    ROLE_BINDINGS,
    ROLES,
    rule_allows,
)
from localcluster.controlplane.emulated.auth.requestinfo import (
    RequestAttributes,
    request_attributes,
)
from localcluster.controlplane.emulated.auth.user import UserInfo, service_account_groups

SA = UserInfo(
    "system:serviceaccount:team:bot",
    groups=(*service_account_groups("team"), "system:authenticated"),
)


def attrs(verb, resource, namespace="", name="", group="", sub=""):
    return RequestAttributes(
        verb=verb,
        resource_request=True,
        api_group=group,
        resource=resource,
        subresource=sub,
        namespace=namespace,
        name=name,
    )


@pytest.mark.parametrize(
    ("rule", "request_", "allowed"),
    [
        ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, attrs("get", "pods"), True),
        ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, attrs("list", "pods"), False),
        ({"apiGroups": ["apps"], "resources": ["pods"], "verbs": ["get"]}, attrs("get", "pods"), False),
        ({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, attrs("delete", "x", group="g"), True),
        ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
         attrs("get", "pods", sub="log"), False),
        ({"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
         attrs("get", "pods", sub="log"), True),
        ({"apiGroups": [""], "resources": ["*/status"], "verbs": ["update"]},
         attrs("update", "pods", sub="status"), True),
        ({"apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"], "verbs": ["get"]},
         attrs("get", "pods", name="b"), False),
        ({"apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"], "verbs": ["get"]},
         attrs("get", "pods", name="a"), True),
        ({"apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"], "verbs": ["list"]},
         attrs("list", "pods"), False),
        ({"nonResourceURLs": ["/healthz"], "verbs": ["get"]}, request_attributes("GET", "/healthz", {}), True),
        ({"nonResourceURLs": ["/apis/*"], "verbs": ["get"]}, request_attributes("GET", "/apis/apps", {}), True),
        ({"nonResourceURLs": ["/apis/*"], "verbs": ["get"]}, request_attributes("GET", "/apis", {}), False),
        ({"nonResourceURLs": ["*"], "verbs": ["get"]}, request_attributes("POST", "/x", {}), False),
    ],
)  # fmt: skip
def test_rule_allows(rule, request_, allowed):
    assert rule_allows(request_, rule) is allowed


@pytest.fixture
def registry():
    reg = Registry()
    yield reg
    reg.stop()


def bind(registry, kind, name, role_kind, role, subjects, namespace=None):
    gvr = ROLE_BINDINGS if kind == "RoleBinding" else CLUSTER_ROLE_BINDINGS
    body = {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }
    registry.create(gvr, namespace, body)


def role(registry, name, rules, namespace=None):
    registry.create(
        ROLES if namespace else CLUSTER_ROLES,
        namespace,
        {"metadata": {"name": name}, "rules": rules},
    )


SA_SUBJECT = {"kind": "ServiceAccount", "name": "bot", "namespace": "team"}
PODS_RW = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "create"]}]


def test_cluster_role_binding_applies_everywhere(registry):
    registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": "team"}})
    role(registry, "pods", PODS_RW)
    authz = Authorizer(registry)
    assert not authz.authorize(SA, attrs("list", "pods")).allowed
    bind(registry, "ClusterRoleBinding", "bot-pods", "ClusterRole", "pods", [SA_SUBJECT])
    decision = authz.authorize(SA, attrs("list", "pods", "elsewhere"))
    assert decision.allowed
    assert decision.reason == (
        'RBAC: allowed by ClusterRoleBinding "bot-pods" of ClusterRole "pods" '
        'to ServiceAccount "bot/team"'
    )
    assert not authz.authorize(SA, attrs("delete", "pods", "team", "p")).allowed


def test_role_binding_is_confined_to_its_namespace(registry):
    registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": "team"}})
    role(registry, "pods", PODS_RW, "team")
    subject = {"kind": "ServiceAccount", "name": "bot"}  # namespace defaults to the binding's
    bind(registry, "RoleBinding", "bot-pods", "Role", "pods", [subject], "team")
    authz = Authorizer(registry)
    assert authz.authorize(SA, attrs("create", "pods", "team")).allowed
    assert not authz.authorize(SA, attrs("create", "pods", "default")).allowed
    assert not authz.authorize(SA, attrs("list", "pods")).allowed  # cluster scope


def test_role_binding_to_a_cluster_role_and_group_subjects(registry):
    registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": "team"}})
    role(registry, "reader", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}])
    group = {"kind": "Group", "name": "system:serviceaccounts:team"}
    bind(registry, "RoleBinding", "readers", "ClusterRole", "reader", [group], "team")
    authz = Authorizer(registry)
    assert authz.authorize(SA, attrs("get", "secrets", "team", "s")).allowed
    assert not authz.authorize(SA, attrs("get", "secrets", "default", "s")).allowed


def test_missing_role_is_the_reason_of_a_denial(registry):
    bind(registry, "ClusterRoleBinding", "dangling", "ClusterRole", "nope", [SA_SUBJECT])
    decision = Authorizer(registry).authorize(SA, attrs("get", "pods", "team", "p"))
    assert not decision.allowed
    assert decision.reason == 'RBAC: clusterrole.rbac.authorization.k8s.io "nope" not found'


def test_masters_and_always_allow(registry):
    admin = UserInfo("admin", groups=("system:masters",))
    assert Authorizer(registry).authorize(admin, attrs("delete", "nodes", name="n")).allowed
    assert Authorizer(registry, "AlwaysAllow").authorize(SA, attrs("delete", "nodes")).allowed
    with pytest.raises(ValueError):
        Authorizer(registry, "Webhook")


def test_forbidden_messages():
    err = forbidden(SA, attrs("update", "tfjobs", "team", "j", "kubeflow.org", "status"))
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == (
        'tfjobs.kubeflow.org "j" is forbidden: User "system:serviceaccount:team:bot" cannot '
        'update resource "tfjobs/status" in API group "kubeflow.org" in the namespace "team"'
    )
    assert err.status["details"] == {"name": "j", "group": "kubeflow.org", "kind": "tfjobs"}
    err = forbidden(SA, request_attributes("GET", "/metrics", {}), "RBAC: x")
    assert (
        err.message
        == 'forbidden: User "system:serviceaccount:team:bot" cannot get path "/metrics": RBAC: x'
    )
