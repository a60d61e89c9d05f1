"""Suspend, resume and delete on one job without a browser: each goes to the client of the kind
its address names, and each is refused the same way (read-only, a kind not served, a cross-site
request) before any client is called."""

import asyncio
import json
from typing import Any

import pytest
from starlette.requests import Request

from test.unit.dashboard.stubs import EmptyCache
from tf_operator.dashboard.app import Dashboard
from tf_operator.sdk import NotFound
from tf_operator.sdk.kinds import PYTORCHJOB, TFJOB


class Recorder:
    """A kind's client that records the writes it is asked for."""

    def __init__(self, kind: Any, missing: bool = False) -> None:
        self.kind = kind
        self.calls: list[tuple[str, str, str]] = []
        self.missing = missing

    def _write(self, verb: str, name: str, namespace: str) -> None:
        if self.missing:
            raise NotFound(404, "NotFound", f'"{name}" not found')
        self.calls.append((verb, name, namespace))

    def suspend(self, name: str, namespace: str) -> None:
        self._write("suspend", name, namespace)

    def resume(self, name: str, namespace: str) -> None:
        self._write("resume", name, namespace)

    def delete(self, name: str, namespace: str) -> None:
        self._write("delete", name, namespace)


WRITES = [
    pytest.param("suspend_job", "suspend", {"name": "j", "suspend": True}, id="suspend"),
    pytest.param("resume_job", "resume", {"name": "j", "suspend": False}, id="resume"),
    pytest.param("delete_job", "delete", {"deleted": "j", "url": "/namespaces/ns"}, id="delete"),
]


def write(
    clients: dict[str, Recorder],
    handler: str,
    plural: str,
    allow_write: bool = True,
    site: str = "",
) -> Any:
    dash = Dashboard(clients, EmptyCache(), allow_write=allow_write, default_namespace="ns")  # type: ignore[arg-type]
    headers = [(b"host", b"127.0.0.1:8080"), (b"x-tfjob-dashboard", b"1")]
    if site:
        headers.append((b"sec-fetch-site", site.encode()))
    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers,
             "path_params": {"namespace": "ns", "plural": plural, "name": "j"}}  # fmt: skip
    response = asyncio.run(getattr(dash, handler)(Request(scope)))
    return response.status_code, json.loads(response.body)


@pytest.mark.parametrize("handler, verb, answer", WRITES)
def test_a_write_goes_to_the_client_of_the_kind_its_address_names(handler, verb, answer):
    clients = {"tfjobs": Recorder(TFJOB), "pytorchjobs": Recorder(PYTORCHJOB)}
    assert write(clients, handler, "pytorchjobs", site="same-origin") == (200, answer)
    assert clients["pytorchjobs"].calls == [(verb, "j", "ns")]
    assert clients["tfjobs"].calls == []


@pytest.mark.parametrize("handler, verb, answer", WRITES)
def test_a_write_is_refused_before_any_client_is_called(handler, verb, answer):
    clients = {"tfjobs": Recorder(TFJOB)}
    status, body = write(clients, handler, "tfjobs", allow_write=False)
    assert status == 403 and "read-only" in body["error"]
    status, body = write(clients, handler, "tfjobs", site="cross-site")
    assert status == 403 and "cross-site" in body["error"]
    status, body = write(clients, handler, "pytorchjobs")
    assert status == 404 and body["error"] == "this dashboard serves no pytorchjobs"
    assert clients["tfjobs"].calls == []


@pytest.mark.parametrize("handler, verb, answer", WRITES)
def test_a_write_on_a_job_gone_is_a_404_from_the_server(handler, verb, answer):
    status, body = write({"tfjobs": Recorder(TFJOB, missing=True)}, handler, "tfjobs")
    assert status == 404 and body["reason"] == "NotFound"
