"""Concurrent writers: the test rewrites TFJob metadata while the operator writes status.

Every metadata write bumps the resourceVersion, so the operator's status PUTs (made with the
cached resourceVersion) meet many 409 Conflicts. The operator must retry through the
``/status`` subresource only: the labels and annotations the test wrote survive, the spec is
untouched, and the final status is right.
"""

from __future__ import annotations

import threading

import pytest

pytestmark = pytest.mark.integration

JOBS = 6


def _settled(job: dict) -> dict | None:
    workers = ((job.get("status") or {}).get("replicaStatuses") or {}).get("Worker") or {}
    return job if workers.get("succeeded") == 3 and not workers.get("active") else None


def test_status_writes_never_clobber_concurrent_metadata_updates(env) -> None:
    op = env.operator("--threadiness=4")
    op.wait_log("Started workers")
    names = [f"cf-{i}" for i in range(JOBS)]
    specs = {name: env.create_job(name, run_seconds=3.0)["spec"] for name in names}
    written: dict[str, set[str]] = {name: set() for name in names}
    stop = threading.Event()

    def touch() -> None:
        # Every job every 10 ms: a status write computed from the cache rarely finds the
        # resourceVersion it read still current.
        n = 0
        while not stop.wait(0.01):
            n += 1
            for name in names:
                label = f"touch-{n}"
                patch = {"metadata": {"labels": {label: "x"}, "annotations": {"last-touch": label}}}
                env.patch_job(name, patch)
                written[name].add(label)

    thread = threading.Thread(target=touch, daemon=True)
    thread.start()
    try:
        env.wait_succeeded(names, timeout=90)
    finally:
        stop.set()
        thread.join(5)
    assert op.alive()
    conflicts = sum(
        n
        for (verb, resource, code), n in env.operator_requests().items()
        if (verb, resource, code) == ("update", "tfjobs/status", 409)
    )
    assert conflicts >= 5, f"only {conflicts} status conflicts: the test did not bite"
    for name in names:
        # The pass after Succeeded folds the still-active workers into succeeded.
        job = env.wait_for(
            lambda n=name: _settled(env.get_job(n)), timeout=10, what=f"{name} status to settle"
        )
        labels = job["metadata"].get("labels") or {}
        lost = sorted(written[name] - set(labels))
        assert lost == [], f"{name}: labels lost: {lost[:5]}"
        assert job["spec"] == specs[name]
        status = job["status"]
        types = {c["type"] for c in status["conditions"] if c["status"] == "True"}
        assert "Succeeded" in types and "Failed" not in types, status
        assert status.get("completionTime") and status.get("startTime")
    env.assert_one_pod_per_index(names)
