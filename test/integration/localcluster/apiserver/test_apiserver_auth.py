"""Authentication and authorization over HTTP: the open and token-protected listeners, the
secure listener for service-account tokens, RBAC 403s, TokenRequest, impersonation and the
review APIs, with kubectl's ``auth can-i``, ``auth whoami`` and ``create token``."""

from __future__ import annotations

import http.client
import json
import ssl

import pytest

from localcluster.controlplane.emulated import APIServer

from .conftest import KUBECTL, Kubectl, write_kubeconfig

pytestmark = pytest.mark.integration

PODS = ("", "v1", "pods")
RBAC = "rbac.authorization.k8s.io"


def call(server: APIServer, method: str, path: str, token: str | None = None, body=None,
         headers: dict | None = None, secure: bool = False):  # fmt: skip
    if secure:
        ctx = ssl.create_default_context(cafile=server.cert_file)
        port = server.secure_port if not server.tls else server.port
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=ctx)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    conn.request(
        method, path, body=json.dumps(body).encode() if body is not None else None, headers=hdrs
    )
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    try:
        return resp.status, json.loads(data)
    except ValueError:
        return resp.status, data


@pytest.fixture
def protected():
    server = APIServer(token="s3cret")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def secured():
    """An open main listener plus a secure one, with a service account ``team/bot``."""
    server = APIServer(secure_port=0)
    server.start()
    reg = server.registry
    reg.create(("", "v1", "namespaces"), None, {"metadata": {"name": "team"}})
    reg.create(("", "v1", "serviceaccounts"), "team", {"metadata": {"name": "bot"}})
    yield server
    server.stop()


def bot_token(server: APIServer, **spec) -> str:
    code, body = call(server, "POST", "/api/v1/namespaces/team/serviceaccounts/bot/token",
                      body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})  # fmt: skip
    assert code == 201, body
    return body["status"]["token"]


# -- item 13.7: the token is enforced on plain HTTP too -----------------------------------


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/version"])
def test_public_paths_stay_anonymous_with_a_token(protected, path):
    assert call(protected, "GET", path)[0] == 200


def test_token_is_enforced_without_tls(protected):
    code, body = call(protected, "GET", "/api/v1/namespaces/default/pods")
    assert code == 403 and body["reason"] == "Forbidden"
    assert 'User "system:anonymous" cannot list resource "pods"' in body["message"]
    assert call(protected, "GET", "/api/v1/namespaces/default/pods", token="wrong")[0] == 401
    assert call(protected, "GET", "/api/v1/namespaces/default/pods", token="s3cret")[0] == 200


def test_fault_endpoint_needs_the_token(protected):
    code, body = call(protected, "POST", "/_localcluster/faults", body={"error_rate": 1.0})
    assert code == 403
    assert (
        body["message"]
        == 'forbidden: User "system:anonymous" cannot post path "/_localcluster/faults"'
    )
    assert protected.faults.error_rate == 0.0
    assert (
        call(protected, "POST", "/_localcluster/faults", token="s3cret", body={"latency_ms": 1})[0]
        == 200
    )


def test_open_server_refuses_non_loopback_address():
    with pytest.raises(ValueError, match="insecure"):
        APIServer(host="0.0.0.0").start()
    for server in (APIServer(host="0.0.0.0", insecure=True), APIServer(host="0.0.0.0", token="t")):
        server.start()
        server.stop()


def test_open_listener_still_checks_presented_tokens(secured):
    assert call(secured, "GET", "/api/v1/pods")[0] == 200  # no credentials: superuser
    assert call(secured, "GET", "/api/v1/pods", token="garbage")[0] == 401


# -- service-account tokens and RBAC -------------------------------------------------------


def test_service_account_token_is_authorized_by_rbac(secured):
    token = bot_token(secured)
    code, body = call(secured, "GET", "/api/v1/namespaces/team/pods", token, secure=True)
    assert code == 403
    assert body["message"] == (
        'pods is forbidden: User "system:serviceaccount:team:bot" cannot list resource "pods" '
        'in API group "" in the namespace "team"'
    )
    assert call(secured, "GET", "/version", token, secure=True)[0] == 200
    assert call(secured, "GET", "/apis", token, secure=True)[0] == 200  # system:discovery
    reg = secured.registry
    reg.create((RBAC, "v1", "roles"), "team", {"metadata": {"name": "pods"},
               "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]})  # fmt: skip
    reg.create((RBAC, "v1", "rolebindings"), "team", {"metadata": {"name": "bot"},
               "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "pods"},
               "subjects": [{"kind": "ServiceAccount", "name": "bot", "namespace": "team"}]})  # fmt: skip
    assert call(secured, "GET", "/api/v1/namespaces/team/pods", token, secure=True)[0] == 200
    assert call(secured, "GET", "/api/v1/namespaces/default/pods", token, secure=True)[0] == 403
    assert call(secured, "GET", "/api/v1/namespaces/team/pods", secure=True)[0] == 403  # anonymous


def test_token_request_validation(secured):
    path = "/api/v1/namespaces/team/serviceaccounts"
    assert call(secured, "POST", f"{path}/nobody/token", body={"spec": {}})[0] == 404
    code, body = call(
        secured, "POST", f"{path}/bot/token", body={"spec": {"expirationSeconds": 60}}
    )
    assert code == 422 and "may not specify a duration less than 10 minutes" in body["message"]
    code, body = call(secured, "POST", f"{path}/bot/token",
                      body={"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "gone"}}})  # fmt: skip
    assert code == 404
    code, body = call(secured, "POST", f"{path}/bot/token", body={"spec": {"audiences": ["vault"]}})
    assert code == 201 and body["spec"]["audiences"] == ["vault"]
    assert call(secured, "GET", "/api/v1/pods", body["status"]["token"], secure=True)[0] == 401


def test_impersonation_needs_the_impersonate_verb(secured):
    token = bot_token(secured)
    headers = {"Impersonate-User": "system:serviceaccount:team:other"}
    code, body = call(secured, "GET", "/api/v1/pods", token, headers=headers, secure=True)
    assert code == 403
    assert body["message"] == (
        'serviceaccounts "other" is forbidden: User "system:serviceaccount:team:bot" cannot '
        'impersonate resource "serviceaccounts" in API group "" in the namespace "team"'
    )
    code, body = call(secured, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                      body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                      headers=headers)  # fmt: skip
    assert code == 201
    assert body["status"]["userInfo"] == {
        "username": "system:serviceaccount:team:other",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"],
    }


def test_access_reviews(secured):
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "team"}}}  # fmt: skip
    code, body = call(
        secured, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=review
    )
    assert code == 201 and body["status"] == {"allowed": False}
    review["spec"]["groups"] = ["system:masters"]
    code, body = call(
        secured, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=review
    )
    assert body["status"]["allowed"] is True
    code, body = call(secured, "GET", "/apis/authorization.k8s.io/v1/subjectaccessreviews")
    assert code == 405
    code, body = call(secured, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                      body={"spec": {}})  # fmt: skip
    assert code == 422


# -- kubectl -------------------------------------------------------------------------------


@pytest.fixture
def kubectl(secured, tmp_path):
    """kubectl against the ``secured`` server's open listener, as the admin."""
    import os

    if not os.path.exists(KUBECTL):
        pytest.skip("kubectl is not installed")
    (tmp_path / "home").mkdir()
    return Kubectl(tmp_path / "home", write_kubeconfig(secured, tmp_path / "kubeconfig"))


def test_kubectl_auth_can_i_as_a_service_account(secured, kubectl):
    sa = "--as=system:serviceaccount:team:bot"
    proc = kubectl("auth", "can-i", "list", "pods", "-n", "team", sa, check=False)
    assert (proc.returncode, proc.stdout.strip()) == (1, "no")
    kubectl("create", "role", "pods", "-n", "team", "--verb=list", "--resource=pods")
    kubectl(
        "create", "rolebinding", "bot", "-n", "team", "--role=pods", "--serviceaccount=team:bot"
    )
    assert kubectl("auth", "can-i", "list", "pods", "-n", "team", sa).stdout.strip() == "yes"
    assert (
        kubectl("auth", "can-i", "list", "pods", "-n", "default", sa, check=False).returncode == 1
    )
    listing = kubectl("auth", "can-i", "--list", "-n", "team", sa).stdout
    assert "pods" in listing and "selfsubjectaccessreviews.authorization.k8s.io" in listing
    assert "system:serviceaccount:team:bot" in kubectl("auth", "whoami", sa).stdout


def test_kubectl_create_token_then_use_it(secured, kubectl):
    token = kubectl("create", "token", "bot", "-n", "team", "--duration=20m").stdout.strip()
    code, body = call(secured, "GET", "/api/v1/namespaces/team/pods", token, secure=True)
    assert code == 403 and "system:serviceaccount:team:bot" in body["message"]
