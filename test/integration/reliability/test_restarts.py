"""Disruptions from outside the operator: the operator process killed with SIGKILL while jobs
are half created, and pods deleted by a user out from under it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

NS = "default"


def _tf_pods(env) -> list[dict]:
    return [p for p in env.pods() if "tf-job-name" in (p["metadata"].get("labels") or {})]


def test_killed_operator_is_replaced_without_duplicate_pods(env) -> None:
    jobs, per_job = 12, 4
    names = [f"rs-{i}" for i in range(jobs)]
    # Slow requests down so the kill lands while jobs are still being created.
    env.faults(latency_ms=40)
    first = env.operator("--threadiness=2")
    first.wait_log("Started workers")
    for name in names:
        env.create_job(name, run_seconds=3.0)
    total = jobs * per_job
    env.wait_for(lambda: len(_tf_pods(env)) >= total // 4, timeout=60, what="a quarter of the pods")
    first.kill()
    created_at_kill = len(_tf_pods(env))
    assert created_at_kill < total, "every pod existed before the kill: nothing to resume"
    env.faults(latency_ms=0)

    second = env.operator("--threadiness=4")
    env.wait_succeeded(names, timeout=90)
    assert second.alive()
    # A job whose worker 0 ran to the end before the successor's first pass is Succeeded by
    # that pass, which makes none of its missing workers (D50).
    env.assert_one_pod_per_index(names, every_index=False)
    # The successor claimed the pods its predecessor had made (same owner, same uid).
    uids = {env.get_job(n)["metadata"]["uid"] for n in names}
    for pod in _tf_pods(env):
        owners = [r["uid"] for r in pod["metadata"].get("ownerReferences") or []]
        assert len(owners) == 1 and owners[0] in uids, pod["metadata"]


def _pod(env, name: str) -> dict | None:
    for pod in env.pods():
        if pod["metadata"]["name"] == name:
            return pod
    return None


def _running(env, name: str, not_uid: str = "") -> dict | None:
    pod = _pod(env, name)
    if pod is None or pod["metadata"]["uid"] == not_uid:
        return None
    if pod["metadata"].get("deletionTimestamp"):
        return None
    return pod if (pod.get("status") or {}).get("phase") == "Running" else None


def test_pods_deleted_by_a_user_are_recreated_exactly_once(env) -> None:
    op = env.operator("--threadiness=2")
    op.wait_log("Started workers")
    name = "ud-0"
    # Worker 0 decides success: it must outlive the victims' recreation, however slow.
    env.create_job(name, workers=2, run_seconds=12.0)
    victims = [f"{name}-ps-0", f"{name}-worker-1"]
    old = {v: env.wait_for(lambda v=v: _running(env, v), 60, f"{v} running") for v in victims}
    for victim in victims:
        env.registry.delete(("", "v1", "pods"), NS, victim)
    for victim in victims:
        uid = old[victim]["metadata"]["uid"]
        env.wait_for(lambda v=victim, u=uid: _running(env, v, u), 60, f"{victim} recreated")
    env.wait_succeeded([name], timeout=60)
    assert op.alive()
    assert env.ledger.violations == []
    assert env.ledger.creations(name) == {
        (NS, name, "ps", "0"): 2,
        (NS, name, "worker", "0"): 1,
        (NS, name, "worker", "1"): 2,
    }


def test_orphan_pods_are_adopted_not_duplicated(env) -> None:
    """Pods without an owner that match a job's selector and were made after the job (made by
    hand for it while no operator ran, or released from it) are adopted by it; none is
    recreated. (Orphans older than the job are an earlier run's: replaced, D67,
    test_ownership.py.)"""
    name = "ad-0"
    uid = env.create_job(name, workers=2, run_seconds=2.0)["metadata"]["uid"]
    for rtype, index in (("ps", 0), ("worker", 0), ("worker", 1)):
        labels = {
            "group-name": "kubeflow.org",
            "tf-job-name": name,
            "tf-replica-type": rtype,
            "tf-replica-index": str(index),
        }
        annotations = {"localcluster.tf-operator.io/run-seconds": "2"} if rtype == "worker" else {}
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{rtype}-{index}",
                "labels": labels,
                "annotations": annotations,
            },
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "tensorflow", "image": "localcluster/none"}],
            },
        }
        env.registry.create(("", "v1", "pods"), NS, pod)
    op = env.operator("--threadiness=2")
    env.wait_succeeded([name], timeout=60)
    assert op.alive()
    assert env.ledger.violations == []
    assert set(env.ledger.creations(name).values()) == {1}
    for pod in _tf_pods(env):
        owners = pod["metadata"].get("ownerReferences") or []
        assert [(o["uid"], o.get("controller")) for o in owners] == [(uid, True)]


def test_exit_code_backoff_limit_survives_an_operator_kill(env) -> None:
    """A worker that always exits 137 under restartPolicy ExitCode with backoffLimit 2: the
    operator is SIGKILLed right after its first recreation and a new one takes over. The
    count lives in the job's status (divergence D11), so the job fails after exactly two
    failures: the worker was created twice, never a third time."""
    name = "bo-0"
    container = {"name": "tensorflow", "image": "localcluster/none"}
    annotations = {
        "localcluster.tf-operator.io/run-seconds": "0.3",
        "localcluster.tf-operator.io/exit-code": "137",
    }
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 2,
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 1,
                    "restartPolicy": "ExitCode",
                    "template": {
                        "metadata": {"annotations": annotations},
                        "spec": {"containers": [container]},
                    },
                }
            },
        },
    }
    worker = (NS, name, "worker", "0")
    first = env.operator("--threadiness=2")
    first.wait_log("Started workers")
    env.registry.create(("kubeflow.org", "v1", "tfjobs"), NS, job)
    env.wait_for(lambda: env.ledger.creations(name).get(worker) == 2, 60, "first recreation")
    first.kill()

    second = env.operator("--threadiness=2")
    env.wait_for(lambda: env.condition(name, "Failed"), 60, "the job to fail")
    failed = [c for c in env.get_job(name)["status"]["conditions"] if c["type"] == "Failed"]
    assert failed[0]["reason"] == "BackoffLimitExceeded"  # divergence D36
    assert (
        failed[0]["message"]
        == f"TFJob {name} has failed because it has reached the specified backoff limit"
    )
    assert env.get_job(name)["status"]["exitCodeRestarts"]["count"] == 2
    assert env.ledger.creations(name) == {worker: 2}
    assert env.ledger.violations == []
    assert second.alive()
