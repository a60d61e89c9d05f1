"""The dashboard's guards without a browser: the Host allow-list on every bind, same-origin
writes, and sign-in in both modes (issue 27, High 2)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tf_operator.dashboard.security import (
    SESSION_COOKIE,
    AuthMiddleware,
    Caller,
    KubernetesAuthenticator,
    TokenAuthenticator,
    allowed_hosts,
    cross_site_write,
    request_namespace,
    request_resource,
    request_verb,
)

TOKEN = "t" * 32


@pytest.mark.parametrize(
    ("address", "extra", "expected"),
    [
        ("127.0.0.1", (), ["127.0.0.1", "localhost", "::1", "[::1]"]),
        ("0.0.0.0", (), ["127.0.0.1", "localhost", "::1", "[::1]"]),
        ("::", ("dash.example",), ["127.0.0.1", "localhost", "::1", "[::1]", "dash.example"]),
        ("10.1.2.3", (), ["127.0.0.1", "localhost", "::1", "[::1]", "10.1.2.3"]),
        ("fd00::5", (), ["127.0.0.1", "localhost", "::1", "[::1]", "[fd00::5]"]),
        ("0.0.0.0", ("*",), ["*"]),
    ],
)
def test_every_bind_has_a_host_allow_list_and_any_host_only_by_name(address, extra, expected):
    assert allowed_hosts(address, extra) == expected


def _headers(**given: str) -> dict[str, str]:
    base = {"host": "127.0.0.1:8080", "x-tfjob-dashboard": "1"}
    base.update({k.replace("_", "-"): v for k, v in given.items()})
    return {k: v for k, v in base.items() if v}


@pytest.mark.parametrize(
    ("headers", "refused"),
    [
        (_headers(), None),  # curl, the SDK: no Origin
        (_headers(origin="http://127.0.0.1:8080", sec_fetch_site="same-origin"), None),
        (_headers(x_tfjob_dashboard=""), "missing X-TFJob-Dashboard header"),
        (_headers(origin="http://evil.example"), "a request from http://evil.example may not"),
        (_headers(sec_fetch_site="cross-site"), "a cross-site request may not write"),
        (_headers(sec_fetch_site="same-site"), "a same-site request may not write"),
        (_headers(origin="null"), "an opaque origin"),
    ],
)
def test_writes_come_from_the_dashboards_own_page(headers, refused):
    why = cross_site_write(headers)
    assert (why is None) if refused is None else (refused in why)


@pytest.mark.parametrize(
    ("method", "path", "verb", "namespace", "resource"),
    [
        ("GET", "/namespaces/team/tfjobs/a", "get", "team", "tfjobs"),
        ("GET", "/namespaces/team/stream", "get", "team", None),  # every kind
        ("GET", "/namespaces/team", "get", "team", None),
        ("POST", "/namespaces/team/tfjobs", "create", "team", "tfjobs"),
        ("POST", "/namespaces/team/jobs", "create", "team", None),  # the kind its YAML names
        ("POST", "/namespaces/team/tfjobs/a/suspend", "patch", "team", "tfjobs"),
        ("DELETE", "/namespaces/team/tfjobs/a", "delete", "team", "tfjobs"),
        ("GET", "/namespaces/team/pytorchjobs/a/stream", "get", "team", "pytorchjobs"),
        ("POST", "/namespaces/team/pytorchjobs/a/resume", "patch", "team", "pytorchjobs"),
        ("GET", "/namespaces/team/mpijobs/a", "get", "team", None),  # a kind not served
        ("GET", "/", "get", "", None),
    ],
)
def test_what_a_request_amounts_to(method, path, verb, namespace, resource):
    assert (request_verb(method, path), request_namespace(path)) == (verb, namespace)
    assert request_resource(path, ("tfjobs", "pytorchjobs")) == resource


class App:
    """The inner ASGI app: records who it saw."""

    def __init__(self) -> None:
        self.callers: list[Caller] = []

    async def __call__(self, scope, receive, send) -> None:
        caller = scope.get("state", {}).get("caller")
        if caller is not None:
            self.callers.append(caller)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def call(app: Any, method: str, path: str, query: str = "", **headers: str):
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query.encode(),
        "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
    }
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = sent[0]
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def test_token_mode_signs_a_browser_in_once_and_refuses_the_rest():
    inner = App()
    app = AuthMiddleware(inner, TokenAuthenticator(TOKEN))
    status, headers, body = call(app, "GET", "/namespaces/default")
    assert status == 401 and b"?token=" in body and headers[b"www-authenticate"]
    assert call(app, "GET", "/namespaces/default", f"token={'x' * 32}")[0] == 401
    status, headers, _ = call(app, "GET", "/namespaces/default", f"token={TOKEN}&a=1")
    assert status == 303 and headers[b"location"] == b"/namespaces/default?a=1"
    cookie = headers[b"set-cookie"].decode()
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
    session = cookie.split(";")[0]
    assert call(app, "GET", "/namespaces/default", cookie=session)[0] == 200
    assert call(app, "GET", "/", authorization=f"Bearer {TOKEN}")[0] == 200
    assert call(app, "GET", "/", cookie=f"{SESSION_COOKIE}=forged")[0] == 401
    assert call(app, "GET", "/healthz")[0] == 200  # probes need no sign-in
    assert call(app, "GET", "/static/dashboard.css")[0] == 200
    assert [c.name for c in inner.callers] == ["dashboard-token"] * 2


class Reviews:
    """The API server's review endpoints, as the authenticator calls them."""

    def __init__(self) -> None:
        self.users = {
            "alice-token": {"username": "alice", "groups": ["dev"]},
            "bob-token": {"username": "bob"},
        }
        self.rights = {
            ("alice", "get", "team", "tfjobs"),
            ("alice", "create", "team", "tfjobs"),
            ("bob", "get", "team", "pytorchjobs"),
            ("bob", "patch", "team", "pytorchjobs"),
        }
        self.calls: list[str] = []

    def resource(self, resource) -> Any:
        reviews = self

        class Client:
            def create(self, body: dict, namespace: str | None = None) -> dict:
                reviews.calls.append(body["kind"])
                spec = body["spec"]
                if body["kind"] == "TokenReview":
                    user = reviews.users.get(spec["token"])
                    return {"status": {"authenticated": user is not None, "user": user or {}}}
                attrs = spec["resourceAttributes"]
                assert attrs["group"] == "kubeflow.org"
                asked = (spec["user"], attrs["verb"], attrs["namespace"], attrs["resource"])
                allowed = asked in reviews.rights
                return {"status": {"allowed": allowed}}

        return Client()


def test_kubernetes_mode_reviews_the_token_and_each_request_like_kube_rbac_proxy():
    reviews = Reviews()
    app = AuthMiddleware(App(), KubernetesAuthenticator(reviews))  # type: ignore[arg-type]
    bearer = {"authorization": "Bearer alice-token"}
    assert call(app, "GET", "/namespaces/team/tfjobs/a", **bearer)[0] == 200
    assert call(app, "POST", "/namespaces/team/tfjobs", **bearer)[0] == 200
    status, _, body = call(app, "DELETE", "/namespaces/team/tfjobs/a", **bearer)
    assert status == 403 and b"alice may not delete TFJobs in namespace team" in body
    assert call(app, "GET", "/namespaces/other", **bearer)[0] == 403
    assert call(app, "GET", "/namespaces/team", authorization="Bearer nobody")[0] == 401
    # answers are cached: one TokenReview per token, one SubjectAccessReview per question
    call(app, "GET", "/namespaces/team/tfjobs/b", **bearer)
    assert reviews.calls.count("TokenReview") == 2  # alice's and nobody's
    assert reviews.calls.count("SubjectAccessReview") == 4


def test_each_kinds_jobs_are_reviewed_on_its_own_resource():
    """A request about one kind is authorised on that kind's plural; a page about every kind
    needs the verb on one of them (the page then shows only those, ``Dashboard``)."""
    reviews = Reviews()
    kinds = ("tfjobs", "pytorchjobs")
    app = AuthMiddleware(App(), KubernetesAuthenticator(reviews), resources=kinds)  # type: ignore[arg-type]
    alice, bob = {"authorization": "Bearer alice-token"}, {"authorization": "Bearer bob-token"}
    assert call(app, "GET", "/namespaces/team/pytorchjobs/a", **bob)[0] == 200
    assert call(app, "POST", "/namespaces/team/pytorchjobs/a/suspend", **bob)[0] == 200
    status, _, body = call(app, "GET", "/namespaces/team/tfjobs/a", **bob)
    assert status == 403 and b"bob may not get TFJobs in namespace team" in body
    status, _, body = call(app, "GET", "/namespaces/team/pytorchjobs/a", **alice)
    assert status == 403 and b"alice may not get PyTorchJobs in namespace team" in body
    # the namespace's list: either kind will do
    assert call(app, "GET", "/namespaces/team", **alice)[0] == 200
    assert call(app, "GET", "/namespaces/team/stream", **bob)[0] == 200
    # a create by YAML: alice may create TFJobs (the page checks the kind it names)
    assert call(app, "POST", "/namespaces/team/jobs", **alice)[0] == 200
    status, _, body = call(app, "POST", "/namespaces/team/jobs", **bob)
    assert status == 403 and b"bob may not create TFJobs or PyTorchJobs" in body
