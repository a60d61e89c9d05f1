"""The job page: a job the dashboard's watch has not delivered yet, a job of each kind, an
address naming a kind the dashboard does not serve."""

import asyncio
from typing import Any

from starlette.requests import Request

from test.unit.dashboard.stubs import EmptyCache
from tf_operator.dashboard.app import Dashboard
from tf_operator.sdk import NotFound
from tf_operator.sdk.kinds import PYTORCHJOB, TFJOB

JOB = {"metadata": {"name": "fresh", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
       "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1}}}}  # fmt: skip
PYTORCH = {"kind": "PyTorchJob", "metadata": JOB["metadata"],
           "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}}}}  # fmt: skip


class Server:
    """A kind's client, as the page calls it."""

    def __init__(self, kind: Any, jobs: dict[str, dict]) -> None:
        self.kind = kind
        self.jobs = jobs

    def get(self, name: str, namespace: str) -> dict:
        if name not in self.jobs:
            raise NotFound(404, "NotFound", f'{self.kind.plural}.kubeflow.org "{name}" not found')
        return self.jobs[name]

    def get_events(self, name: str, namespace: str) -> list[dict]:
        return []


def job_page(servers: dict[str, Server], plural: str, name: str) -> Any:
    dash = Dashboard(servers, EmptyCache(), allow_write=True, default_namespace="ns")  # type: ignore[arg-type]
    scope = {"type": "http", "method": "GET", "path": "/", "headers": [],
             "path_params": {"namespace": "ns", "plural": plural, "name": name}}  # fmt: skip
    return asyncio.run(dash.job_page(Request(scope)))


def test_a_job_the_cache_has_not_seen_is_read_from_the_server():
    page = job_page({"tfjobs": Server(TFJOB, {"fresh": JOB})}, "tfjobs", "fresh")
    assert page.status_code == 200
    assert b'id="delete"' in page.body and b"does not exist" not in page.body


def test_a_job_missing_on_the_server_too_is_a_404():
    page = job_page({"tfjobs": Server(TFJOB, {})}, "tfjobs", "gone")
    assert page.status_code == 404 and b"TFJob ns/gone does not exist" in page.body


def test_a_pytorchjob_page_streams_and_writes_at_its_kinds_address():
    servers = {"tfjobs": Server(TFJOB, {}), "pytorchjobs": Server(PYTORCHJOB, {"fresh": PYTORCH})}
    page = job_page(servers, "pytorchjobs", "fresh")
    assert page.status_code == 200
    assert b'data-stream="/namespaces/ns/pytorchjobs/fresh/stream"' in page.body
    assert b'data-action="/namespaces/ns/pytorchjobs/fresh"' in page.body  # delete
    assert b'data-job-kind="PyTorchJob"' in page.body and b"Delete PyTorchJob" in page.body
    assert b"Master=1" in page.body
    # the TFJob of that name is another job: it does not exist
    assert job_page(servers, "tfjobs", "fresh").status_code == 404


def test_a_kind_the_dashboard_does_not_serve_is_a_404():
    page = job_page({"tfjobs": Server(TFJOB, {"fresh": JOB})}, "pytorchjobs", "fresh")
    assert page.status_code == 404 and b"serves no pytorchjobs" in page.body


def test_a_job_with_a_lifecycle_policy_shows_it_its_budget_causes_and_block():
    job = {
        **JOB,
        "spec": {**JOB["spec"], "backoffLimit": 3},
        "status": {
            "lifecyclePolicy": {"failure": {}},
            "exitCodeRestarts": {"count": 1},
            "restartsByCause": {"Disruption": 2, "FailureRule": 1},
            "conditions": [
                {"type": "Created", "status": "True", "reason": "TFJobCreated",
                 "message": "TFJob fresh is created. Blocked: pod fresh-worker-0: ErrImagePull"}
            ],
        },
    }  # fmt: skip
    page = job_page({"tfjobs": Server(TFJOB, {"fresh": job})}, "tfjobs", "fresh")
    body = page.body.decode()
    assert '<dd id="lifecycle-policy"><code>{&#34;failure&#34;:{}}</code></dd>' in body
    assert '<dd id="restart-budget">1 of 3 used</dd>' in body
    assert '<dd id="restarts-by-cause">Disruption=2, FailureRule=1</dd>' in body
    assert '<dd id="blocked">pod fresh-worker-0: ErrImagePull</dd>' in body
    plain = job_page({"tfjobs": Server(TFJOB, {"fresh": JOB})}, "tfjobs", "fresh")
    assert b"lifecycle-policy" not in plain.body  # a job without a policy: as before
