"""With Kubernetes sign-in, a job page shows only what RBAC lets the caller read: its events
pane needs ``list events``, its logs ``get pods/log``, each asked of the API server on
exactly that resource; a pane the caller may not read is left out and says why."""

import asyncio
from typing import Any

from starlette.requests import Request

from tf_operator.dashboard.app import Dashboard
from tf_operator.dashboard.security import Caller
from tf_operator.sdk import ApiError
from tf_operator.sdk.kinds import TFJOB

JOB = {"kind": "TFJob",
       "metadata": {"name": "j", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
       "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1}}}}  # fmt: skip
POD = {"metadata": {"name": "j-worker-0", "namespace": "ns", "uid": "u"},
       "status": {"phase": "Running"}}  # fmt: skip
EVENT = {"type": "Warning", "reason": "SecretReason", "message": "the secret event text"}


class Rights:
    """A SubjectAccessReview stand-in: the (verb, group, resource) the caller holds."""

    def __init__(self, *held: tuple[str, str, str]) -> None:
        self.held = set(held)
        self.asked: list[tuple[str, str, str]] = []

    def authorize(self, caller: Caller, verb: str, namespace: str, resource: str, group: str = "kubeflow.org") -> bool:  # fmt: skip
        self.asked.append((verb, group, resource))
        return (verb, group, resource) in self.held


class Server:
    kind = TFJOB

    def __init__(self) -> None:
        self.reads: list[str] = []

    def get(self, name: str, namespace: str) -> dict:
        return JOB

    def get_events(self, name: str, namespace: str) -> list[dict]:
        self.reads.append("events")
        return [EVENT]

    def get_pod_group(self, name: str, namespace: str) -> None:
        self.reads.append("podgroup")
        return None

    def stream_pod_log(self, pod: str, namespace: str, **_: Any) -> Any:
        self.reads.append(f"log {pod}")
        raise ApiError(403, "Forbidden", "the test follows no log")


class Cache:
    def job(self, plural: str, ns: str, name: str) -> dict:
        return JOB

    def pods(self, plural: str, ns: str, name: str) -> list[dict]:
        return [POD]

    def subscribe(self, wants: Any, deliver: Any) -> int:
        return 1

    def unsubscribe(self, token: int) -> None:
        pass


GET_JOBS = ("get", "kubeflow.org", "tfjobs")
LIST_EVENTS = ("list", "", "events")
GET_LOGS = ("get", "", "pods/log")


def _dashboard(rights: Rights, server: Server) -> Dashboard:
    return Dashboard({"tfjobs": server}, Cache(), allow_write=False, default_namespace="ns",  # type: ignore[arg-type]
                     authenticator=rights)  # type: ignore[arg-type]  # fmt: skip


def _request() -> Request:
    return Request({"type": "http", "method": "GET", "path": "/", "headers": [],
                    "state": {"caller": Caller("carol")},
                    "path_params": {"namespace": "ns", "plural": "tfjobs", "name": "j"}})  # fmt: skip


def _page(rights: Rights) -> tuple[str, Server]:
    server = Server()
    page = asyncio.run(_dashboard(rights, server).job_page(_request()))
    assert page.status_code == 200
    return page.body.decode(), server


def _stream(rights: Rights) -> tuple[str, Server]:
    """The stream's first message (the detail), and what it read to make it and after."""
    server = Server()

    async def first() -> str:
        dashboard = _dashboard(rights, server)
        response = await dashboard.job_stream(_request())
        chunks = [chunk async for chunk in _until_stopped(dashboard, response.body_iterator)]
        return str(chunks[0])

    return asyncio.run(first()), server


async def _until_stopped(dashboard: Dashboard, body: Any) -> Any:
    """The stream's messages up to its first round (detail, then the logs it follows): the
    dashboard stops as the first message is taken, so the round ends the stream."""
    async for chunk in body:
        dashboard.stopping.set()
        yield chunk


def test_an_account_that_may_only_get_the_job_sees_neither_its_events_nor_its_logs():
    rights = Rights(GET_JOBS)
    body, server = _page(rights)
    assert "the secret event text" not in body
    assert "you may not list events in this namespace" in body
    assert "you may not read the logs of pods in this namespace" in body
    assert server.reads == []  # nothing read on the caller's behalf
    assert {LIST_EVENTS, GET_LOGS} <= set(rights.asked)
    detail, server = _stream(rights)
    assert "the secret event text" not in detail and server.reads == []


def test_each_pane_is_shown_when_its_own_right_is_held():
    body, server = _page(Rights(GET_JOBS, LIST_EVENTS))
    assert "the secret event text" in body
    assert "you may not read the logs" in body
    _, server = _stream(Rights(GET_JOBS, GET_LOGS))
    assert server.reads == ["log j-worker-0"]


def test_a_subresource_is_reviewed_as_one():
    from tf_operator.dashboard.security import KubernetesAuthenticator

    bodies: list[dict] = []

    class Reviews:
        def resource(self, _resource: Any) -> Any:
            class Client:
                def create(self, body: dict, namespace: str | None = None) -> dict:
                    bodies.append(body["spec"]["resourceAttributes"])
                    return {"status": {"allowed": True}}

            return Client()

    auth = KubernetesAuthenticator(Reviews())  # type: ignore[arg-type]
    assert auth.authorize(Caller("carol"), "get", "ns", "pods/log", group="")
    assert auth.authorize(Caller("carol"), "get", "ns", "tfjobs")
    assert bodies == [
        {"group": "", "resource": "pods", "subresource": "log", "verb": "get", "namespace": "ns"},
        {"group": "kubeflow.org", "resource": "tfjobs", "verb": "get", "namespace": "ns"},
    ]
