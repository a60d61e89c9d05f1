"""What is not a replica of a job is replaced, never counted, on the real operator (issue 27,
items 6-8; D67, D68).

- A job deleted with ``--cascade=orphan`` and created again must run again: the earlier run's
  Completed pods are deleted (Warning ``StalePod``) and made anew, not adopted as a success.
- A job deleted and created again while the operator relisted (its pod watch behind, its job
  watch compacted away) arrives as an update whose UID changed: the new job gets its pods at
  once, not after the old job's expectations expire (5 minutes).
- A running worker whose index label is removed is deleted and created again (Warning
  ``InvalidReplicaIndex``), and a worker missing beside it is created too.
"""

from __future__ import annotations

import time

import pytest

from .conftest import NS, PODS, TFJOBS

pytestmark = pytest.mark.integration

EVENTS = ("", "v1", "events")


def _warnings(env, name: str, reason: str) -> list[str]:
    items, _ = env.registry.list(EVENTS, NS)
    return [
        e["message"]
        for e in items
        if e["involvedObject"].get("name") == name and e.get("reason") == reason
    ]


def _pods_of(env, name: str) -> list[dict]:
    return [p for p in env.pods() if p["metadata"]["labels"].get("tf-job-name") == name]


def test_a_job_recreated_after_an_orphaning_delete_runs_again(env):
    env.operator()
    env.create_job("again", workers=1, run_seconds=0.3)
    env.wait_succeeded(["again"], timeout=60)
    first_uids = {p["metadata"]["uid"] for p in _pods_of(env, "again")}
    assert first_uids
    env.registry.delete(TFJOBS, NS, "again", propagation_policy="Orphan")
    env.wait_for(lambda: not env.registry.list(TFJOBS, NS)[0], 30, "the job gone")
    orphans = _pods_of(env, "again")
    assert orphans and all(not p["metadata"].get("ownerReferences") for p in orphans)
    # creation timestamps are whole seconds: the new job must be born a second later
    stamp = max(p["metadata"]["creationTimestamp"] for p in orphans)
    env.wait_for(
        lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) > stamp, 5, "a new second"
    )

    env.create_job("again", workers=1, run_seconds=0.3)
    env.wait_succeeded(["again"], timeout=60)
    second_uids = {p["metadata"]["uid"] for p in _pods_of(env, "again")}
    assert second_uids and not (second_uids & first_uids), "the old run was counted"
    created = env.ledger.creations("again")
    assert created[(NS, "again", "worker", "0")] == 2 and created[(NS, "again", "ps", "0")] == 2
    assert _warnings(env, "again", "StalePod")
    assert env.ledger.violations == []


def test_a_job_recreated_while_the_operator_relists_gets_its_pods_at_once(env):
    op = env.operator()
    env.create_job("warmup", workers=1, run_seconds=0.2)
    env.wait_succeeded(["warmup"], timeout=60)
    slow = {"latency_ms": 4000, "match": {"methods": ["GET"], "path_prefix": "/api/v1/"}}
    try:
        # The operator's pod and service watches come back 4 s late: the first job's pods are
        # created and not yet seen (creation expectations pending) when it is replaced.
        env.faults(**slow, drop_watches=True)
        env.create_job("swap", workers=2, run_seconds=30)
        env.wait_for(lambda: len(_pods_of(env, "swap")) == 3, 30, "the first job's pods")
        # Now its job watch is late too, and resumes from a compacted version: it relists,
        # and sees the new job in place of the old one, an update whose UID changed.
        env.faults(latency_ms=4000, match={"methods": ["GET"], "path_prefix": "/ap"})
        env.faults(drop_watches=True)
        old_uid = env.get_job("swap")["metadata"]["uid"]
        env.registry.delete(TFJOBS, NS, "swap")
        env.create_job("swap", workers=2, run_seconds=0.5)
        env.faults(compact=True)
    finally:
        env.faults(latency_ms=0, match={})
    new_uid = env.get_job("swap")["metadata"]["uid"]
    assert new_uid != old_uid
    env.wait_succeeded(["swap"], timeout=60)  # v0.5.3: no pod for 5 min (expectations TTL)
    assert "was deleted and created again" in op.text()  # seen as an update (relist)
    assert env.ledger.violations == []


def test_a_worker_whose_index_label_is_removed_is_replaced(env):
    env.operator()
    env.create_job("relabel", workers=3, run_seconds=6)
    env.wait_for(lambda: len(_pods_of(env, "relabel")) == 4, 30, "the pods")
    env.registry.delete(PODS, NS, "relabel-worker-2", grace_period_seconds=0)
    env.registry.patch(
        PODS, NS, "relabel-worker-1", {"metadata": {"labels": {"tf-replica-index": None}}}, "merge"
    )
    env.wait_for(lambda: _warnings(env, "relabel", "InvalidReplicaIndex"), 30, "the warning")
    env.wait_succeeded(["relabel"], timeout=90)
    created = env.ledger.creations("relabel")
    assert created[(NS, "relabel", "worker", "1")] == 2  # replaced
    assert created[(NS, "relabel", "worker", "2")] == 2  # and the missing one made again
    assert env.ledger.violations == []
