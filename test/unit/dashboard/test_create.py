"""Create from YAML: a job of the kind the YAML names (posted to ``/jobs``), or only of the
kind the address names; a kind the dashboard does not serve, or one the caller may not create,
is refused with the reason."""

import asyncio
import json
from typing import Any

import pytest
from starlette.requests import Request

from tf_operator.dashboard.app import Dashboard
from tf_operator.dashboard.security import Caller
from tf_operator.sdk.kinds import KINDS

WRITE = {"X-TFJob-Dashboard": "1", "Content-Type": "application/yaml"}


class Client:
    """A kind's client, as the create calls it."""

    def __init__(self, kind: Any) -> None:
        self.kind = kind
        self.created: list[dict] = []

    def create(self, job: dict, namespace: str) -> dict:
        self.created.append(job)
        return job


class Rights:
    """Kubernetes sign-in's answers: bob may create PyTorchJobs only."""

    mode = "kubernetes"

    def authorize(self, caller: Caller, verb: str, namespace: str, resource: str) -> bool:
        return (caller.name, verb, resource) == ("bob", "create", "pytorchjobs")


class Response:
    def __init__(self, status_code: int, body: bytes) -> None:
        self.status_code = status_code
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


class Http:
    """Posts to the dashboard's create handler as Starlette routes a request to it."""

    def __init__(self, dash: Dashboard, caller: Caller | None) -> None:
        self.dash = dash
        self.caller = caller

    def post(self, plural: str, text: str) -> Response:
        scope = {
            "type": "http",
            "method": "POST",
            "path": f"/namespaces/ns/{plural}",
            "headers": [(k.lower().encode(), v.encode()) for k, v in WRITE.items()],
            "path_params": {"namespace": "ns", "plural": plural},
            "state": {} if self.caller is None else {"caller": self.caller},
        }

        async def receive() -> dict:
            return {"type": "http.request", "body": text.encode(), "more_body": False}

        response = asyncio.run(self.dash.create_job(Request(scope, receive)))
        return Response(response.status_code, bytes(response.body))


BY_PLURAL = {k.plural: k for k in KINDS.values()}


def dashboard(plurals=tuple(BY_PLURAL), authenticator=None, caller=None):
    clients = {p: Client(BY_PLURAL[p]) for p in plurals}
    dash = Dashboard(clients, None, True, "ns", authenticator=authenticator)  # type: ignore[arg-type]
    return Http(dash, caller), clients


def post(http: Http, plural: str, text: str) -> Response:
    return http.post(plural, text)


@pytest.mark.parametrize(
    ("text", "made", "url"),
    [
        ("kind: PyTorchJob\nmetadata: {name: p}\n", "pytorchjobs", "/namespaces/ns/pytorchjobs/p"),
        ("kind: XGBoostJob\nmetadata: {name: x}\n", "xgboostjobs", "/namespaces/ns/xgboostjobs/x"),
        ("kind: JAXJob\nmetadata: {name: j}\n", "jaxjobs", "/namespaces/ns/jaxjobs/j"),
        ("kind: PaddleJob\nmetadata: {name: p}\n", "paddlejobs", "/namespaces/ns/paddlejobs/p"),
        ("kind: TFJob\nmetadata: {name: t}\n", "tfjobs", "/namespaces/ns/tfjobs/t"),
        ("metadata: {name: t}\n", "tfjobs", "/namespaces/ns/tfjobs/t"),  # as the form always did
    ],
)
def test_the_yaml_names_the_kind_made(text, made, url):
    http, clients = dashboard()
    response = post(http, "jobs", text)
    assert response.status_code == 201 and response.json()["url"] == url
    assert [p for p, c in clients.items() if c.created] == [made]
    assert clients[made].created[0]["apiVersion"] == "kubeflow.org/v1"


def test_an_address_of_one_kind_makes_only_that_kind():
    http, clients = dashboard()
    response = post(http, "pytorchjobs", "kind: TFJob\nmetadata: {name: t}\n")
    assert response.status_code == 400
    assert response.json()["error"] == "expected kind PyTorchJob, got 'TFJob'"
    assert post(http, "mpijobs", "kind: TFJob\n").status_code == 404
    assert not any(c.created for c in clients.values())


def test_a_kind_not_known_or_not_served_is_refused_with_the_reason():
    http, _ = dashboard(plurals=("tfjobs",))
    response = post(http, "jobs", "kind: PyTorchJob\nmetadata: {name: p}\n")
    assert response.status_code == 400
    assert "serves no PyTorchJobs (its CRD is not installed)" in response.json()["error"]
    response = post(http, "jobs", "kind: MPIJob\nmetadata: {name: m}\n")
    assert response.json()["error"] == (
        "expected kind TFJob or PyTorchJob or XGBoostJob or JAXJob or PaddleJob, got 'MPIJob'"
    )


def test_with_kubernetes_sign_in_the_kind_named_is_authorised():
    http, clients = dashboard(authenticator=Rights(), caller=Caller("bob"))
    response = post(http, "jobs", "kind: TFJob\nmetadata: {name: t}\n")
    assert response.status_code == 403 and "may not create TFJobs in ns" in response.json()["error"]
    assert post(http, "jobs", "kind: PyTorchJob\nmetadata: {name: p}\n").status_code == 201
    assert [c.kind.kind for c in clients.values() if c.created] == ["PyTorchJob"]
