"""Edits of a job's spec (issue 13, finding 4; divergence D39): Succeeded and Failed are final
whatever the spec becomes, a running job edited into an invalid spec runs on its last valid spec
(recorded in its status, so a new process does too), ``startTime`` is set once, and a pass on a
cache that missed our finishing write creates nothing."""

import copy
import dataclasses
import json

import pytest

from support.fake_recorder import FakeRecorder
from tf_operator.k8s.client import PODS

NS = "default"
# what each kind's validation says of a worker container without an image
INVALID = {
    "tfjob": "Image is undefined in the container of Worker",
    "pytorchjob": "spec.pytorchReplicaSpecs[Worker].template.spec.containers[0].image: Required value",
    "paddlejob": "spec.paddleReplicaSpecs[Worker].template.spec.containers[0].image: Required value",
}


def _edit(harness, job, mutate):
    """Edit the stored job's spec as a user would (no CEL), and let the cache see it."""
    stored = harness.stored_job(job)
    mutate(stored["spec"])
    updated = harness.client.resource(harness.case.resource).update(stored, namespace=NS)
    harness.cache_job(updated)
    return updated


def _break(spec):
    specs = next(v for key, v in spec.items() if key.endswith("ReplicaSpecs"))
    specs["Worker"]["template"]["spec"]["containers"][0]["image"] = ""


def _resync(harness, job):
    """Let the cache see what the last pass wrote, then sync again."""
    harness.cache_job(harness.stored_job(job))
    harness.client.clear_actions()
    harness.sync(job)


def _observe_pods(harness, phases):
    """The created pods reach ``phases`` (pod name → phase) and the informers see them and
    the services."""
    from tf_operator.k8s.client import SERVICES

    pods = harness.client.resource(PODS)
    for pod in pods.list(namespace=NS)["items"]:
        pod["status"] = {"phase": phases.get(pod["metadata"]["name"], "Running")}
        seen = harness.pod_informer.get_indexer().get(pod) is not None
        harness.pod_informer.get_indexer().update(pods.update_status(pod, namespace=NS))
        if not seen:
            harness.ctr.pods.on_add(pod)
    for service in harness.client.resource(SERVICES).list(namespace=NS)["items"]:
        if harness.service_informer.get_indexer().get(service) is None:
            harness.service_informer.get_indexer().add(service)
            harness.ctr.services.on_add(service)


def _condition(harness, job, ctype):
    for cond in harness.status(job).get("conditions") or []:
        if cond["type"] == ctype:
            return cond
    return None


def _finished(harness, k, phase):
    """A job whose worker finished in ``phase``, synced to its final status."""
    job = harness.add_job(k.new_job(worker=1, other=1))
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    _observe_pods(harness, {"test-tfjob-worker-0": phase})
    harness.clock.step(30)
    harness.sync(job)
    assert _condition(harness, job, phase)["status"] == "True"
    _resync(harness, job)
    return job


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_finished_job_edited_invalid_and_back_keeps_its_status_and_creates_nothing(
    harness, k, phase
):
    """v0.5.3 replaced a finished job's status with Failed/InvalidTFJobSpec, and the fix ran
    it again from scratch."""
    job = _finished(harness, k, phase)
    final = harness.status(job)
    assert "lastValidSpec" not in final  # dropped once finished
    harness.recorder.clear()

    _edit(harness, job, _break)
    harness.client.clear_actions()
    harness.clock.step(30)
    harness.sync(job)
    harness.sync(job)
    assert harness.actions("update") == [] and harness.created("pods") == []
    assert harness.status(job) == final
    warnings = [
        e for e in harness.recorder.events if e.startswith(f"Warning Invalid{k.kind_name}Spec")
    ]
    assert len(warnings) == 1 and "has finished; the edit of its spec is ignored" in warnings[0]

    _edit(harness, job, lambda spec: spec.update(k.new_job(worker=3, other=1)["spec"]))
    harness.clock.step(30)
    harness.sync(job)
    _resync(harness, job)
    assert harness.created("pods") == [] and harness.created("services") == []
    assert harness.status(job)["conditions"] == final["conditions"]
    assert harness.status(job)["startTime"] == final["startTime"]
    assert harness.status(job)["completionTime"] == final["completionTime"]


def _running(harness, k):
    job = harness.add_job(k.new_job(worker=2))
    harness.sync(job)
    _observe_pods(harness, {})
    _resync(harness, job)
    assert _condition(harness, job, "Running")["status"] == "True"
    return job


def test_running_job_edited_invalid_runs_on_its_last_valid_spec(harness, k):
    """v0.5.3 failed it (its pods running on), and the fix reset startTime."""
    job = _running(harness, k)
    started = harness.status(job)["startTime"]
    image = harness.stored_job(job)["spec"][k.specs_field]["Worker"]["template"]["spec"][
        "containers"
    ][0]["image"]
    harness.recorder.clear()

    _edit(harness, job, _break)
    harness.clock.step(30)
    # A pod lost meanwhile is recreated from the last valid template.
    lost = harness.client.resource(PODS).get("test-tfjob-worker-1", namespace=NS)
    harness.client.resource(PODS).delete("test-tfjob-worker-1", namespace=NS)
    harness.pod_informer.get_indexer().delete(lost)
    harness.client.clear_actions()
    harness.sync(job)
    assert [p["metadata"]["name"] for p in harness.created("pods")] == ["test-tfjob-worker-1"]
    assert harness.created("pods")[0]["spec"]["containers"][0]["image"] == image
    status = harness.status(job)
    assert not any(c["type"] == "Failed" for c in status["conditions"])
    ignored = _condition(harness, job, "SpecIgnored")
    assert (ignored["status"], ignored["reason"]) == ("True", f"Invalid{k.kind_name}Spec")
    assert (
        INVALID[k.name] in ignored["message"]
        and "runs on its last valid spec" in ignored["message"]
    )
    assert status["conditions"][-1]["type"] == "Running"  # kubectl's State column
    assert status["startTime"] == started
    _observe_pods(harness, {})
    _resync(harness, job)
    _resync(harness, job)
    warnings = [
        e for e in harness.recorder.events if e.startswith(f"Warning Invalid{k.kind_name}Spec")
    ]
    assert len(warnings) == 1

    _edit(harness, job, lambda spec: spec.update(k.new_job(worker=3)["spec"]))
    harness.clock.step(30)
    harness.sync(job)
    assert _condition(harness, job, "SpecIgnored") is None
    assert harness.status(job)["startTime"] == started
    assert [p["metadata"]["name"] for p in harness.created("pods")] == ["test-tfjob-worker-2"]


def test_a_new_process_runs_an_edited_job_on_the_recorded_spec(harness, k, make_harness):
    """The last valid spec lives in the job's status: an operator restart or a new leader,
    which never saw the valid spec, goes on from it."""
    job = _running(harness, k)
    _edit(harness, job, _break)
    fresh = make_harness(client=harness.client)
    fresh.cache_job(harness.stored_job(job))
    for pod in harness.pod_informer.get_indexer().list():
        fresh.pod_informer.get_indexer().add(pod)
    for service in harness.service_informer.get_indexer().list():
        fresh.service_informer.get_indexer().add(service)
    fresh.recorder = FakeRecorder()
    harness.client.clear_actions()
    fresh.sync(job)
    assert _condition(fresh, job, "SpecIgnored")["status"] == "True"
    assert not any(c["type"] == "Failed" for c in fresh.status(job)["conditions"])
    assert fresh.created("pods") == [] and fresh.deleted("pods") == []


def test_job_never_valid_is_failed_and_stays_failed_when_fixed(harness, k):
    """Without a recorded spec the job never ran: Failed as invalid, and Failed is final (D8)."""
    bad = k.new_job(worker=1)
    _break(bad["spec"])
    job = harness.add_job(bad)
    harness.sync(job)
    assert _condition(harness, job, "Failed")["reason"] == f"Invalid{k.kind_name}Spec"
    _edit(harness, job, lambda spec: spec.update(k.new_job(worker=1)["spec"]))
    harness.sync(job)
    assert _condition(harness, job, "Failed")["reason"] == f"Invalid{k.kind_name}Spec"
    assert harness.created("pods") == []


def test_pass_on_a_cache_that_missed_the_finishing_write_creates_nothing(harness, k):
    """A backoff-limit failure deletes the active pods (D16); a pass on a cache that has seen
    the deletions but not the Failed status counts no restarts any more (they were on the
    deleted pods) and would create the pods again."""
    spec = k.new_job(worker=2, backoffLimit=1)
    spec["spec"][k.specs_field]["Worker"]["restartPolicy"] = "OnFailure"
    job = harness.add_job(spec)
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    stale = copy.deepcopy(harness.stored_job(job))
    _observe_pods(harness, {})
    pods = harness.client.resource(PODS)
    restarted = pods.get("test-tfjob-worker-0", namespace=NS)
    restarted["status"]["containerStatuses"] = [{"name": k.container, "restartCount": 1}]
    harness.pod_informer.get_indexer().update(pods.update_status(restarted, namespace=NS))
    harness.client.clear_actions()
    harness.sync(job)
    assert _condition(harness, job, "Failed")["reason"] == "BackoffLimitExceeded"
    assert sorted(harness.deleted("pods")) == ["test-tfjob-worker-0", "test-tfjob-worker-1"]
    for plural, informer, owned in (
        ("pods", harness.pod_informer, harness.ctr.pods),
        ("services", harness.service_informer, harness.ctr.services),
    ):
        for name in harness.deleted(plural):
            gone = informer.get_indexer().get_by_key(f"{NS}/{name}")
            informer.get_indexer().delete(gone)
            owned.on_delete(gone)
    harness.cache_job(stale)
    harness.client.clear_actions()
    harness.sync(job)
    assert harness.created("pods") == [] and harness.actions("update") == []


def test_spec_json_is_compact_sorted_and_takes_any_json_number():
    from tf_operator.common.jobcontroller.edits import spec_json

    assert spec_json({"spec": {"b": [1, 0.5], "a": {"y": None, "x": "é"}}}) == (
        '{"a":{"x":"\\u00e9","y":null},"b":[1,0.5]}'
    )
    wide = {"spec": {"n": 2**70}}
    assert json.loads(spec_json(wide)) == {"n": 2**70}


def _count_validations(harness, monkeypatch):
    """The passes' full decodes (validation included) of the controller's kind, counted."""
    edits, calls = harness.ctr.edits, []
    kind = edits._kind

    def decode(raw, defaults):
        calls.append(raw["metadata"].get("generation"))
        return kind.decode(raw, defaults)

    monkeypatch.setattr(edits, "_kind", dataclasses.replace(kind, decode=decode))
    return calls


def test_a_spec_is_validated_once_until_it_changes(harness, k, monkeypatch):
    """Status writes and pod events leave the spec as it was: a pass validates only a spec
    this process has not found valid; an edit is validated again."""
    calls = _count_validations(harness, monkeypatch)
    job = _running(harness, k)
    _resync(harness, job)
    assert calls == [1]
    recorded = harness.status(job)["lastValidSpec"]

    _edit(harness, job, _break)
    harness.sync(job)
    # the edit, then its last valid spec to run on
    assert calls == [1, 2, 2]
    assert _condition(harness, job, "SpecIgnored")["status"] == "True"
    assert harness.status(job)["lastValidSpec"] == recorded  # still the valid spec

    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert calls == [1, 2, 2, 2, 2]  # an invalid spec is not remembered


def test_a_changed_spec_is_validated_whatever_its_generation_says(harness, k, monkeypatch):
    """The spec itself is compared, not metadata.generation (a server could re-default a
    stored spec without a new generation)."""
    calls = _count_validations(harness, monkeypatch)
    job = _running(harness, k)
    cached = harness.job_informer.get_indexer().get(job)
    edited = copy.deepcopy(cached)
    _break(edited["spec"])
    assert edited["metadata"]["generation"] == cached["metadata"]["generation"]
    now = harness.clock.now()

    assert harness.ctr.edits.decode(copy.deepcopy(cached), now)[1] is None
    before = len(calls)
    _, ignored, text = harness.ctr.edits.decode(edited, now)
    assert len(calls) > before
    assert INVALID[k.name] in str(ignored) and text is None
