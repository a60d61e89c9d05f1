"""Chaos on the newer surfaces: what a hostile user can do with two kinds, queues,
coscheduling and large specs, against the real operator on the simulated cluster.

- a queued job evicted while its pods are still being created (200 ms on every request of the
  operator) and admitted again on another flavour the moment it reads as inactive: no pod is
  left on the evicted flavour, and the job finishes on the new one (D151);
- a PyTorchJob created with the name of a running TFJob: the TFJob runs on untouched, the
  PyTorchJob fails with ``NameConflict`` instead of looping on AlreadyExists or succeeding on
  its Master alone (D152);
- a gang whose PodGroup can never wait at Permit (``scheduleTimeoutSeconds: 0``) beside
  healthy gangs: the healthy jobs are scheduled and succeed; a job asking for such a timeout
  is refused at admission (D150);
- a job whose spec is close to half of etcd's request limit: its status (which no longer
  copies the spec) is written and it succeeds (D153);
- beside healthy gangs, the jobs' API failing one request in five, a gang asking more members than it has pods
  and a job whose template names a PriorityClass that does not exist: each waits, says why in
  its Created condition with one Warning event however many passes and retries see it, and
  runs once fixed, the reason gone (D156, D157).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from localcluster import kueue
from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.coscheduling import POD_GROUP_LABEL, PODGROUPS, SCHEDULER_NAME
from localcluster.kueue import ClientJobs, Kueue, PodSetInfo, Workload
from localcluster.nodepool import NodePool
from support.crd import PYTORCH_CRD_FILE, install_crds

from .conftest import NS, PODS, RUN_SECONDS, TFJOBS, Env, PodLedger, wait_for

pytestmark = pytest.mark.integration

PYTORCHJOBS = ("kubeflow.org", "v1", "pytorchjobs")
CRD_FILE = Path(__file__).resolve().parents[3] / "manifests/base/crd.yaml"
POOLS = [NodePool("a", labels={"pool": "a"}), NodePool("b", labels={"pool": "b"})]
LATENCY_MS = 200


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    with LocalCluster(
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.2),
        node_pools=POOLS,
        scheduler_plugins=True,
    ) as c:
        install_crds(c.registry, CRD_FILE, PYTORCH_CRD_FILE)
        ledger = PodLedger()
        unhook = ledger.install(c.registry)
        e = Env(c, ledger, tmp_path)
        try:
            yield e
        finally:
            e.faults(error_rate=0.0, latency_ms=0, match={})
            for op in e.operators:
                op.stop()
            unhook()


def _container() -> dict[str, Any]:
    return {"name": "tensorflow", "image": "localcluster/none"}


def _pods_of(env: Env, name: str) -> list[dict[str, Any]]:
    items, _ = env.registry.list(PODS, NS, label_selector=f"training.kubeflow.org/job-name={name}")
    return list(items)


def _conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        c["type"]: c
        for c in (obj.get("status") or {}).get("conditions") or []
        if c.get("status") == "True"
    }


# -- eviction during creation -------------------------------------------------------------------


def _queued(name: str) -> dict[str, Any]:
    replica = {"replicas": 4, "template": {"spec": {"containers": [_container()]}}}
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "labels": {kueue.QUEUE_LABEL: "user-queue"}},
        "spec": {"runPolicy": {}, "tfReplicaSpecs": {"Worker": replica}},
    }
    return kueue.default_on_create(job)


def _on_pool(workload: Workload, pool: str, finish_in: str | None = None) -> list[PodSetInfo]:
    annotations = {RUN_SECONDS: finish_in} if finish_in else {}
    return [PodSetInfo(annotations=annotations, node_selector={"pool": pool})] * len(
        workload.pod_sets
    )


def test_an_eviction_while_pods_are_created_and_an_immediate_readmission(env: Env) -> None:
    env.operator("--no-leader-elect", "--threadiness=2")
    queue, name = Kueue(ClientJobs(env.cluster.client)), "evicted-early"
    env.registry.create(TFJOBS, NS, _queued(name))
    wait_for(lambda: "Suspended" in _conditions(env.get_job(name)), 30, "Suspended")
    workload = queue.workload(NS, name)
    env.faults(latency_ms=LATENCY_MS)  # every request of the operator now takes 200 ms
    queue.admit(workload, _on_pool(workload, "a"))
    wait_for(lambda: _pods_of(env, name), 30, "the first pod created")
    queue.evict(workload)  # while the others are still being created
    # Kueue admits the job again the moment it reads as inactive
    wait_for(lambda: not kueue.is_active(env.get_job(name)), 60, "the job inactive")
    queue.admit(workload, _on_pool(workload, "b", finish_in="1"))
    env.faults(latency_ms=0)

    def pools() -> set[str]:
        return {
            (p["spec"].get("nodeSelector") or {}).get("pool", "")
            for p in _pods_of(env, name)
            if not p["metadata"].get("deletionTimestamp")
        }

    wait_for(lambda: "Succeeded" in _conditions(env.get_job(name)), 60, "Succeeded")
    assert pools() <= {"b"}, "a pod of the evicted admission is left"
    assert env.ledger.violations == []


# -- two kinds, one name ---------------------------------------------------------------------


def _pytorchjob(name: str) -> dict[str, Any]:
    container = {"name": "pytorch", "image": "localcluster/none"}
    template = {
        "metadata": {"annotations": {RUN_SECONDS: "1"}},
        "spec": {"containers": [container]},
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": template},
                "Worker": {"replicas": 2, "template": template},
            }
        },
    }


def test_a_job_of_the_other_kind_with_the_same_name(env: Env) -> None:
    env.operator("--no-leader-elect", "--enable-scheme=tfjob", "--enable-scheme=pytorchjob")
    name = "twin"
    env.registry.create(TFJOBS, NS, env.job_body(name, workers=2, run_seconds=3))
    wait_for(lambda: len(_pods_of(env, name)) == 3, 30, "the TFJob's pods")
    env.registry.create(PYTORCHJOBS, NS, _pytorchjob(name))

    failed = wait_for(
        lambda: _conditions(env.registry.get(PYTORCHJOBS, NS, name)).get("Failed"),
        30,
        "the PyTorchJob failed",
    )
    assert failed["reason"] == "NameConflict"
    assert "TFJob twin controls it" in failed["message"]
    assert "Succeeded" not in _conditions(env.registry.get(PYTORCHJOBS, NS, name))
    wait_for(lambda: "Succeeded" in _conditions(env.get_job(name)), 30, "the TFJob Succeeded")
    for pod in _pods_of(env, name):  # none of the TFJob's pods went to the other job
        refs = pod["metadata"].get("ownerReferences") or []
        assert all(r["kind"] == "TFJob" for r in refs if pod["metadata"]["name"] != "twin-master-0")


# -- a gang that can never wait ---------------------------------------------------------------


def _gang_job(name: str, **scheduling: Any) -> dict[str, Any]:
    container = {**_container(), "resources": {"requests": {"cpu": "100m"}}}
    template = {
        "metadata": {"annotations": {RUN_SECONDS: "1"}},
        "spec": {"containers": [container]},
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {
            "runPolicy": {"schedulingPolicy": scheduling} if scheduling else {},
            "tfReplicaSpecs": {"Worker": {"replicas": 3, "template": template}},
        },
    }


def test_a_gang_with_an_impossible_timeout_beside_healthy_gangs(env: Env) -> None:
    env.operator(
        "--no-leader-elect",
        "--enable-gang-scheduling=true",
        "--gang-scheduler-name=scheduler-plugins",
    )
    with pytest.raises(Exception, match="scheduleTimeoutSeconds"):
        env.registry.create(TFJOBS, NS, _gang_job("never", scheduleTimeoutSeconds=0))
    # a user's own gang that can never wait, made before the healthy ones (it sorts first)
    env.registry.create(
        PODGROUPS,
        NS,
        {"metadata": {"name": "stuck"}, "spec": {"minMember": 3, "scheduleTimeoutSeconds": 0}},
    )
    for i in range(3):
        pod = {
            "metadata": {"name": f"stuck-{i}", "labels": {POD_GROUP_LABEL: "stuck"}},
            "spec": {"schedulerName": SCHEDULER_NAME, "containers": [_container()]},
        }
        env.registry.create(PODS, NS, pod)
    names = [f"healthy-{i}" for i in range(3)]
    for name in names:
        env.registry.create(TFJOBS, NS, _gang_job(name, scheduleTimeoutSeconds=30))
    env.wait_succeeded(names, timeout=60)
    stuck = [env.registry.get(PODS, NS, f"stuck-{i}") for i in range(3)]
    assert all(not p["spec"].get("nodeName") for p in stuck)


# -- a job near the object size limit ---------------------------------------------------------


def test_a_job_near_the_object_size_limit_gets_its_status_and_succeeds(env: Env) -> None:
    """A status copying the spec would double the object past etcd's limit: every write of
    the running job would be refused, and only the final one (which drops the copy) land."""
    env.operator("--no-leader-elect")
    job = env.job_body("large", workers=1, run_seconds=3)
    job["spec"]["tfReplicaSpecs"].pop("PS")
    container = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    container["env"] = [{"name": "PAYLOAD", "value": "x" * 900_000}]  # over half of 1.5 MiB
    env.registry.create(TFJOBS, NS, job)
    wait_for(lambda: "Running" in _conditions(env.get_job("large")), 30, "Running written")
    assert "lastValidSpec" not in env.get_job("large")["status"]
    wait_for(lambda: "Succeeded" in _conditions(env.get_job("large")), 60, "Succeeded")


# -- jobs nothing can schedule as written, under faults -----------------------------------------

EVENTS = ("", "v1", "events")
PRIORITY_CLASSES = ("scheduling.k8s.io", "v1", "priorityclasses")


def _warnings(env: Env, name: str, reason: str) -> list[dict[str, Any]]:
    items, _ = env.registry.list(EVENTS, NS)
    return [
        e
        for e in items
        if e["involvedObject"].get("name") == name
        and e["reason"] == reason
        and e["type"] == "Warning"
    ]


def _blocked(env: Env, name: str) -> str:
    created = _conditions(env.get_job(name)).get("Created") or {}
    message = str(created.get("message") or "")
    return message.split(" Blocked: ", 1)[1] if " Blocked: " in message else ""


def test_jobs_nothing_can_schedule_say_why_once_under_faults_and_run_once_fixed(env: Env) -> None:
    env.operator(
        "--no-leader-elect",
        "--enable-gang-scheduling=true",
        "--gang-scheduler-name=scheduler-plugins",
    )
    # the jobs' reads and status writes fail one time in five (not the events: a refused event
    # is dropped, never retried, as client-go's recorder does; the condition is what lasts)
    env.faults(error_rate=0.2, error_code=500, match={"path_prefix": "/apis/kubeflow.org/"})
    env.registry.create(TFJOBS, NS, _gang_job("too-big", minAvailable=10))
    unranked = _gang_job("unranked")
    template = unranked["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    template["spec"]["priorityClassName"] = "nosuch"
    env.registry.create(TFJOBS, NS, unranked)
    healthy = [f"healthy-{i}" for i in range(3)]
    for name in healthy:
        env.registry.create(TFJOBS, NS, _gang_job(name))
    env.wait_succeeded(healthy, timeout=90)
    wait_for(lambda: _blocked(env, "too-big").startswith("runPolicy"), 30, "too-big told")
    wait_for(lambda: "no PriorityClass with name nosuch" in _blocked(env, "unranked"), 30, "told")
    env.faults(error_rate=0.0, match={})
    for name, reason in (("too-big", "GangUnsatisfiable"), ("unranked", "CreateRefused")):
        (told,) = wait_for(partial(_warnings, env, name, reason), 30, f"{name}'s event")
        assert told.get("count", 1) == 1, f"{name} told {told.get('count')} times"
    assert not _pods_of(env, "unranked")
    assert all(not p["spec"].get("nodeName") for p in _pods_of(env, "too-big"))

    job = env.get_job("too-big")
    job["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] = 3
    env.registry.update(TFJOBS, NS, "too-big", job)
    env.registry.create(PRIORITY_CLASSES, None, {"metadata": {"name": "nosuch"}, "value": 10})
    env.wait_succeeded(["too-big", "unranked"], timeout=90)
    for name, reason in (("too-big", "GangUnsatisfiable"), ("unranked", "CreateRefused")):
        assert _blocked(env, name) == ""
        assert [e.get("count", 1) for e in _warnings(env, name, reason)] == [1]
    assert env.ledger.violations == []
