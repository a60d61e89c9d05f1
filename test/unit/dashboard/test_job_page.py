"""The job page of a job the dashboard's watch has not delivered yet."""

import asyncio
from typing import Any

from starlette.requests import Request

from tf_operator.dashboard.app import Dashboard
from tf_operator.sdk import NotFound

JOB = {"metadata": {"name": "fresh", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
       "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1}}}}  # fmt: skip


class EmptyCache:
    def job(self, ns: str, name: str) -> None:
        return None

    def pods(self, ns: str, name: str) -> list[Any]:
        return []


class Server:
    def __init__(self, jobs: dict[str, dict]) -> None:
        self.jobs = jobs

    def get(self, name: str, namespace: str) -> dict:
        if name not in self.jobs:
            raise NotFound(404, "NotFound", f'tfjobs.kubeflow.org "{name}" not found')
        return self.jobs[name]

    def get_events(self, name: str, namespace: str) -> list[dict]:
        return []


def job_page(server: Server, name: str) -> Any:
    dash = Dashboard(server, EmptyCache(), allow_write=True, default_namespace="ns")  # type: ignore[arg-type]
    scope = {"type": "http", "method": "GET", "path": "/", "headers": [],
             "path_params": {"namespace": "ns", "name": name}}  # fmt: skip
    return asyncio.run(dash.job_page(Request(scope)))


def test_a_job_the_cache_has_not_seen_is_read_from_the_server():
    page = job_page(Server({"fresh": JOB}), "fresh")
    assert page.status_code == 200
    assert b'id="delete"' in page.body and b"does not exist" not in page.body


def test_a_job_missing_on_the_server_too_is_a_404():
    page = job_page(Server({}), "gone")
    assert page.status_code == 404 and b"does not exist" in page.body
