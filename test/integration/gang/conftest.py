"""Gang scheduling end to end: a local cluster running a batch scheduler, the real
``tf-operator`` binary (this repo's console script) started with ``--enable-gang-scheduling``.

``start_operator(cluster, *flags)`` runs the binary against the cluster's kubeconfig and stops
it after the test; its log is kept under the test's tmp_path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.testing import wait_for
from support.operator_process import OperatorProcess

ROOT = Path(__file__).resolve().parents[3]
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
EVENTS = ("", "v1", "events")


@pytest.fixture
def start_operator(tmp_path) -> Iterator:
    started: list[OperatorProcess] = []

    def start(cluster, *flags: str) -> OperatorProcess:
        log = tmp_path / f"operator-{len(started)}.log"
        operator = OperatorProcess(cluster.kubeconfig, log, ["--no-leader-elect", *flags])
        started.append(operator)
        return operator

    yield start
    for operator in started:
        operator.stop()


def events_about(registry, name: str, kind: str | None = None) -> list[dict]:
    items, _ = registry.list(EVENTS, "default")
    return [
        e
        for e in items
        if e["involvedObject"].get("name") == name
        and (kind is None or e["involvedObject"].get("kind") == kind)
    ]


def tfjob_condition(registry, name: str, ctype: str) -> dict | None:
    job = registry.get(TFJOBS, "default", name)
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond["type"] == ctype and cond["status"] == "True":
            return cond
    return None


__all__ = ["events_about", "tfjob_condition", "wait_for"]
