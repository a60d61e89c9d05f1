"""The operator on the real control plane: kube-scheduler binds the replicas to our kubelets,
kube-apiserver proxies their logs from our kubelet, kube-controller-manager's garbage collector
removes a deleted job's pods and services.

The operator's whole integration suite also runs here (its fixtures' ``real`` ids); this
module pins what only the real servers do.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.cluster import LocalCluster
from localcluster.testing import wait_for
from support.crd import crd_objects
from support.operator_process import OperatorProcess

TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PODS = ("", "v1", "pods")
SERVICES = ("", "v1", "services")
EVENTS = ("", "v1", "events")
NS = "default"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(
        control_plane="real", kubelet="process", nodes=2, crds=crd_objects()
    ) as started:
        yield started


@pytest.fixture
def operator(cluster: LocalCluster, tmp_path: Path) -> Iterator[OperatorProcess]:
    process = OperatorProcess(cluster.kubeconfig, tmp_path / "operator.log", ["--no-leader-elect"])
    yield process
    process.stop()


def tfjob(name: str, ps: str, worker: str) -> dict:
    def replica(count: int, code: str) -> dict:
        container = {"name": "tensorflow", "image": "localcluster/none"}
        container["command"] = [sys.executable, "-c", code]
        return {
            "replicas": count,
            "restartPolicy": "Never",
            "template": {"spec": {"containers": [container]}},
        }

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {"tfReplicaSpecs": {"PS": replica(1, ps), "Worker": replica(2, worker)}},
    }


def kubectl(cluster: LocalCluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", cluster.kubeconfig, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": cluster.state_dir},
    )


def condition(cluster: LocalCluster, name: str, kind: str) -> bool:
    conditions = (cluster.client.get(TFJOBS, NS, name).get("status") or {}).get("conditions")
    return any(c["type"] == kind and c["status"] == "True" for c in conditions or [])


def test_a_ps_and_two_workers_succeed_with_kube_scheduler_placing_them(cluster, operator):
    assert cluster.scheduler is None  # no scheduler of ours: kube-scheduler binds every pod
    cluster.client.create(
        TFJOBS,
        NS,
        tfjob(
            "placed",
            "import time\nwhile True: time.sleep(1)",
            "import os; print('worker', os.environ['TF_CONFIG'] != '')",
        ),
    )
    wait_for(lambda: condition(cluster, "placed", "Succeeded"), 60, what="the job Succeeded")
    pods = cluster.client.list(PODS, NS, label_selector="tf-job-name=placed").items
    assert {p["metadata"]["name"] for p in pods} >= {"placed-worker-0", "placed-worker-1"}
    assert {p["spec"]["nodeName"] for p in pods} <= set(cluster.node_names)
    scheduled = [
        e
        for e in cluster.client.list(EVENTS, NS).items
        if e.get("reason") == "Scheduled"
        and e["involvedObject"]["name"].startswith("placed-worker-")
    ]
    assert {e.get("reportingComponent") or e["source"]["component"] for e in scheduled} == {
        "default-scheduler"
    }
    # kube-apiserver proxies the log from our kubelet's HTTPS endpoint
    logs = kubectl(cluster, "logs", "placed-worker-1")
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout.strip() == "worker True"


def test_deleting_a_job_lets_the_garbage_collector_remove_its_pods_and_services(cluster, tmp_path):
    """The operator is stopped before the deletion: only kube-controller-manager's garbage
    collector, following the owner references the operator wrote, can remove them."""
    operator = OperatorProcess(cluster.kubeconfig, tmp_path / "op.log", ["--no-leader-elect"])
    forever = "import time\nwhile True: time.sleep(1)"
    try:
        cluster.client.create(TFJOBS, NS, tfjob("collected", forever, forever))

        def running() -> bool:
            pods = cluster.client.list(PODS, NS, label_selector="tf-job-name=collected").items
            return len(pods) == 3 and all(p["status"].get("phase") == "Running" for p in pods)

        wait_for(running, 60, what="three running replicas")
    finally:
        operator.stop()
    assert len(cluster.client.list(SERVICES, NS, label_selector="tf-job-name=collected").items) == 3
    cluster.client.delete(TFJOBS, NS, "collected", propagation_policy="Background")

    def collected() -> bool:
        selector = "tf-job-name=collected"
        return not cluster.client.list(PODS, NS, label_selector=selector).items and not (
            cluster.client.list(SERVICES, NS, label_selector=selector).items
        )

    wait_for(collected, 90, what="the garbage collector to remove the pods and services")
