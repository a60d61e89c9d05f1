"""Edits that the CRD lets through and the operator refuses (issue 13, findings 4 and 5), on the
simulated cluster with the real operator process.

- A Succeeded job edited into an invalid spec (a tensorflow container nested deeper than the
  operator runs, which the CRD keeps as written, D70) keeps its status, and undoing the edit
  runs nothing again (v0.5.3 replaced the status with Failed, then ran the job a second time).
- A running job edited the same way goes on from its last valid spec, with a SpecIgnored
  condition and a Warning event; the fix drops the condition and keeps ``startTime`` (v0.5.3
  marked it Failed while its pods ran on, and the fix restarted the deadline clock).
- Where admission is absent (a schema without its rules, a store written directly), a job whose
  name cannot name a Service is Failed with a Warning event that the API server accepts.
"""

from __future__ import annotations

import pytest

from support.crd import strip_crd_validation
from support.edits import edit

from .conftest import NS, TFJOBS

pytestmark = pytest.mark.integration

EVENTS = ("", "v1", "events")
SYNCED_DONE = 'Finished syncing tfjob \\"default/done\\"'


def _conditions(env, name: str) -> dict[str, dict]:
    conditions = (env.get_job(name).get("status") or {}).get("conditions") or []
    return {c["type"]: c for c in conditions}


def _true(env, name: str, ctype: str) -> dict | None:
    cond = _conditions(env, name).get(ctype)
    return cond if cond and cond["status"] == "True" else None


def _nest(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth - 1):
        value = {"x": value}
    return value


def _break_spec(env, name: str) -> None:
    """An edit the CRD keeps and the operator refuses: nested 120 levels deep (D70)."""

    def change(job: dict) -> None:
        for spec in job["spec"]["tfReplicaSpecs"].values():
            spec["template"]["spec"]["containers"][0]["extra"] = _nest(120)

    edit(env.registry, TFJOBS, NS, name, change)


def _restore_spec(env, name: str) -> None:
    def change(job: dict) -> None:
        for spec in job["spec"]["tfReplicaSpecs"].values():
            spec["template"]["spec"]["containers"][0].pop("extra")

    edit(env.registry, TFJOBS, NS, name, change)


def _warnings(env, name: str) -> list[dict]:
    items, _ = env.registry.list(EVENTS, NS)
    return [
        e
        for e in items
        if e["involvedObject"].get("name") == name
        and e["type"] == "Warning"
        and e["reason"] == "InvalidTFJobSpec"
    ]


def test_succeeded_job_edited_invalid_and_back_stays_succeeded(env):
    op = env.operator("--threadiness=2")
    env.create_job("done", workers=1, run_seconds=0.2)
    env.wait_succeeded(["done"], timeout=60)
    final = env.get_job("done")["status"]
    created = dict(env.ledger.creations("done"))

    _break_spec(env, "done")
    env.wait_for(lambda: _warnings(env, "done"), 30, "the Warning event about the ignored edit")
    synced = op.text().count(SYNCED_DONE)
    _restore_spec(env, "done")
    env.wait_for(lambda: op.text().count(SYNCED_DONE) > synced, 30, "a sync after the fix")

    status = env.get_job("done")["status"]
    for key in ("conditions", "startTime", "completionTime"):
        assert status.get(key) == final.get(key), key
    assert env.ledger.creations("done") == created
    assert len(_warnings(env, "done")) == 1


def test_running_job_edited_invalid_runs_on_and_the_fix_keeps_start_time(env):
    env.operator("--threadiness=2")
    env.create_job("long", workers=2, run_seconds=600)
    env.wait_for(lambda: _true(env, "long", "Running"), 60, "long Running")
    started = env.get_job("long")["status"]["startTime"]

    _break_spec(env, "long")
    ignored = env.wait_for(lambda: _true(env, "long", "SpecIgnored"), 30, "SpecIgnored")
    assert ignored["reason"] == "InvalidTFJobSpec"
    assert "levels of objects and arrays" in ignored["message"]
    assert not _true(env, "long", "Failed")
    assert _true(env, "long", "Running")
    env.wait_for(lambda: _warnings(env, "long"), 30, "the Warning event")
    live = [p for p in env.pods() if p["metadata"]["labels"].get("tf-job-name") == "long"]
    assert len(live) == 3 and not any(p["metadata"].get("deletionTimestamp") for p in live)

    _restore_spec(env, "long")
    env.wait_for(lambda: "SpecIgnored" not in _conditions(env, "long"), 30, "SpecIgnored gone")
    assert env.get_job("long")["status"]["startTime"] == started
    assert _true(env, "long", "Running") and not _true(env, "long", "Failed")
    assert env.ledger.violations == []


MISNAMED = ["UpperCase", "a_b", "-lead", "naïve", "my.job"]


def test_misnamed_jobs_fail_with_a_warning_event(env, monkeypatch):
    """``my.job`` passes a real API server's name rule (only the CRD's CEL rule refuses it);
    the others are written past the name check, as a store without admission would keep them.
    The API server still validates every other object's name, events' included."""
    from localcluster.controlplane.emulated.admission import validation

    check = validation.validate_name
    monkeypatch.setattr(
        validation,
        "validate_name",
        lambda name, rule, field="metadata.name": (
            [] if name in MISNAMED else check(name, rule, field)
        ),
    )
    strip_crd_validation(env.registry)
    env.operator("--threadiness=2")
    for name in MISNAMED:
        env.registry.create(TFJOBS, NS, env.job_body(name, workers=1))
    for name in MISNAMED:
        cond = env.wait_for(lambda n=name: _true(env, n, "Failed"), 30, f"{name} Failed")
        assert cond["reason"] == "InvalidTFJobSpec" and "DNS-1035" in cond["message"]
        event = env.wait_for(lambda n=name: _warnings(env, n), 30, f"event about {name}")[0]
        assert validation.name_errors(event["metadata"]["name"], "subdomain") == []
    services, _ = env.registry.list(("", "v1", "services"), NS)
    assert [p for p in env.pods() if p["metadata"]["labels"].get("tf-job-name") in MISNAMED] == []
    assert services == [] or all(
        s["metadata"]["labels"].get("tf-job-name") not in MISNAMED for s in services
    )
