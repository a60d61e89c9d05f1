"""Bounded work per job (issue 13, finding 1), with one worker (``--threadiness 1``) and a TFJob
schema stripped of its checks, as on a cluster without CEL:

- jobs with 2^31-1 and 2^40 workers are reported invalid at once and cost the operator no
  memory (v0.5.3 allocated a list per declared replica, ~200 MB/s, and its one worker never
  came back);
- a job whose pods the API server refuses (a quantity it cannot parse) costs one refused create
  per pass, not one per replica, and its services are created a budget at a time;
- meanwhile, small jobs run to completion; deleting the bad jobs leaves the operator as it was.
"""

from __future__ import annotations

import copy

import psutil
import pytest

from support.crd import strip_crd_validation

from .conftest import NS, TFJOBS

pytestmark = pytest.mark.integration

FAILING_REPLICAS = 300
# The operator's resident memory may grow this much while it serves the jobs below.
MAX_RSS_GROWTH = 150 * 2**20


def _with_workers(job: dict, replicas: int, **container: object) -> dict:
    worker = copy.deepcopy(job["spec"]["tfReplicaSpecs"]["Worker"])
    worker["replicas"] = replicas
    worker["template"]["spec"]["containers"][0].update(container)
    job["spec"]["tfReplicaSpecs"]["Worker"] = worker
    return job


def _condition(env, name: str, ctype: str) -> dict | None:
    for cond in (env.get_job(name).get("status") or {}).get("conditions") or []:
        if cond["type"] == ctype and cond["status"] == "True":
            return cond
    return None


def test_absurd_and_failing_jobs_never_starve_others(env):
    strip_crd_validation(env.registry)
    op = env.operator("--threadiness=1")
    op.wait_log("Started workers")
    rss_before = psutil.Process(op.proc.pid).memory_info().rss

    absurd = {"absurd-int32": 2**31 - 1, "absurd-int64": 2**40}
    for name, replicas in absurd.items():
        env.registry.create(TFJOBS, NS, _with_workers(env.job_body(name), replicas))
    failing = _with_workers(
        env.job_body("failing"), FAILING_REPLICAS, resources={"requests": {"cpu": "lots"}}
    )
    env.registry.create(TFJOBS, NS, failing)
    small = [f"small-{i}" for i in range(5)]
    for name in small:
        env.create_job(name, workers=2, run_seconds=0.5)

    env.wait_succeeded(small, timeout=90)
    for name, replicas in absurd.items():
        cond = env.wait_for(lambda n=name: _condition(env, n, "Failed"), 30, f"{name} Failed")
        assert cond["reason"] == "InvalidTFJobSpec"
        assert f"replicas of Worker must be at most 1000 (got {replicas})" in cond["message"]
    assert not _condition(env, "failing", "Succeeded")
    rss_after = psutil.Process(op.proc.pid).memory_info().rss
    assert rss_after - rss_before < MAX_RSS_GROWTH, (rss_before, rss_after)

    assert env.ledger.violations == []

    for name in [*absurd, "failing"]:
        env.registry.delete(TFJOBS, NS, name)
    for name in [*absurd, "failing"]:
        op.wait_log(rf"TFJob has been deleted: default/{name}", 30)
    env.create_job("after", workers=1, run_seconds=0.2)
    env.wait_succeeded(["after"], timeout=60)
    assert op.alive()

    # Counted once the operator has stopped: a graceful stop lets the pass in flight finish
    # and log, so every refused create belongs to a logged pass. The server cannot decode the
    # quantity: 400 (a real API server's "cannot be handled as").
    op.stop()
    requests = env.operator_requests()
    refused = requests[("create", "pods", 400)] + requests[("create", "pods", 422)]
    failing_syncs = op.text().count('Finished syncing tfjob \\"default/failing')
    print(
        f"refused pod creates {refused} in {failing_syncs} passes of the failing job; "
        f"operator RSS {rss_before >> 20} -> {rss_after >> 20} MiB"
    )
    assert 0 < refused <= failing_syncs  # one refused create per pass, not one per replica
