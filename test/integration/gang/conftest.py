"""Gang scheduling end to end: a local cluster running a batch scheduler, the real
``tf-operator`` binary (this repo's console script) started with ``--enable-gang-scheduling``.

``start_operator(cluster, *flags)`` runs the binary against the cluster's kubeconfig and stops
it after the test; its log is kept under the test's tmp_path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from localcluster.testing import wait_for

ROOT = Path(__file__).resolve().parents[3]
OPERATOR = Path(sys.executable).parent / "tf-operator"
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
EVENTS = ("", "v1", "events")


def install_tfjob_crd(registry) -> None:
    for doc in yaml.safe_load_all((ROOT / "manifests/base/crd.yaml").read_text()):
        if doc:
            registry.create(CRDS, None, doc)


@pytest.fixture
def start_operator(tmp_path) -> Iterator:
    started: list[tuple[subprocess.Popen, object]] = []

    def start(cluster, *flags: str) -> subprocess.Popen:
        log = open(tmp_path / f"operator-{len(started)}.log", "wb")  # noqa: SIM115 - closed below
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        proc = subprocess.Popen(
            [
                str(OPERATOR),
                f"--kubeconfig={cluster.kubeconfig}",
                "--monitoring-port=0",
                "--monitoring-address=127.0.0.1",
                "--no-leader-elect",
                *flags,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        started.append((proc, log))
        return proc

    yield start
    for proc, log in started:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        log.close()


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


__all__ = ["events_about", "install_tfjob_crd", "tfjob_condition", "wait_for"]
