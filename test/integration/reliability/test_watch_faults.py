"""Watch drops and history compaction while jobs run: the operator's reflectors must rewatch
(or relist after 410 Gone) without losing track of a pod or creating one twice."""

from __future__ import annotations

import threading

import pytest

pytestmark = pytest.mark.integration

JOBS = 20


def test_jobs_survive_dropped_watches_and_compaction(env) -> None:
    op = env.operator("--threadiness=4")
    op.wait_log("Started workers")
    names = [f"wd-{i}" for i in range(JOBS)]
    stop = threading.Event()
    rounds = {"drop": 0, "compact": 0}

    def chaos() -> None:
        # Alternate a bare drop (the reflectors rewatch from their last RV) with compaction
        # followed by a drop (the rewatch gets 410 Gone and must relist); every 0.3 s for as
        # long as the jobs run.
        n = 0
        while not stop.wait(0.3):
            n += 1
            compact = n % 2 == 0
            if compact:
                env.faults(compact=True)
            env.faults(drop_watches=True)
            rounds["compact" if compact else "drop"] += 1

    thread = threading.Thread(target=chaos, daemon=True)
    thread.start()
    try:
        for name in names:  # spread over ~3 s so creations overlap the faults
            env.create_job(name, run_seconds=2.5)
            stop.wait(0.15)
        env.wait_succeeded(names, timeout=90)
    finally:
        stop.set()
        thread.join(5)
    assert rounds["compact"] >= 3, rounds
    assert op.alive()
    env.assert_one_pod_per_index(names)
    # The reflectors really had to relist after compaction (410 Gone on rewatch).
    assert op.text().count("relisting") >= 3


def test_jobs_survive_errors_latency_and_watch_drops_together(env) -> None:
    op = env.operator("--threadiness=4")
    op.wait_log("Started workers")
    names = [f"mix-{i}" for i in range(12)]
    stop = threading.Event()

    def chaos() -> None:
        n = 0
        while not stop.wait(0.5):
            n += 1
            if n % 2 == 0:
                env.faults(compact=True)  # the admin endpoint itself is never faulted
            env.faults(drop_watches=True)

    env.faults(error_rate=0.2, error_code=500, latency_ms=20)
    thread = threading.Thread(target=chaos, daemon=True)
    thread.start()
    try:
        for name in names:
            env.create_job(name, run_seconds=2.5)
        env.wait_succeeded(names, timeout=90)
    finally:
        stop.set()
        thread.join(5)
        env.faults(error_rate=0.0, latency_ms=0)
    assert op.alive()
    env.assert_one_pod_per_index(names, every_index=False)


def _live_workers(env, job: str) -> set[str]:
    return {
        p["metadata"]["labels"]["tf-replica-index"]
        for p in env.pods()
        if p["metadata"]["labels"].get("tf-job-name") == job
        and p["metadata"]["labels"].get("tf-replica-type") == "worker"
        and not p["metadata"].get("deletionTimestamp")
        and (p.get("status") or {}).get("phase") == "Running"
    }


def test_scale_down_and_up_under_watch_drops(env) -> None:
    """Deletion expectations (scale-down deletes out-of-range pods) must be met through
    relist tombstones too; the scale-up then recreates each index exactly once more."""
    op = env.operator("--threadiness=4")
    op.wait_log("Started workers")
    name = "sc-0"
    # Workers run long enough that a slow scale-down and scale-up (a loaded machine, chaos
    # every 0.2 s) still find every index running; only the final wait sees them finish.
    env.create_job(name, workers=4, run_seconds=20.0)
    all_four = {"0", "1", "2", "3"}
    env.wait_for(lambda: _live_workers(env, name) == all_four, 60, "4 running workers")
    stop = threading.Event()

    def chaos() -> None:
        n = 0
        while not stop.wait(0.2):
            n += 1
            if n % 2 == 0:
                env.faults(compact=True)
            env.faults(drop_watches=True)

    thread = threading.Thread(target=chaos, daemon=True)
    thread.start()
    try:
        scale = {"spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2}}}}
        env.patch_job(name, scale)
        env.wait_for(lambda: _live_workers(env, name) == {"0", "1"}, 60, "scale-down")
        scale["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 4
        env.patch_job(name, scale)
        env.wait_for(lambda: _live_workers(env, name) == all_four, 60, "scale-up")
        env.wait_succeeded([name], timeout=90)
    finally:
        stop.set()
        thread.join(5)
    assert op.alive()
    assert env.ledger.violations == []
    ns = "default"
    assert env.ledger.creations(name) == {
        (ns, name, "ps", "0"): 1,
        (ns, name, "worker", "0"): 1,
        (ns, name, "worker", "1"): 1,
        (ns, name, "worker", "2"): 2,
        (ns, name, "worker", "3"): 2,
    }
