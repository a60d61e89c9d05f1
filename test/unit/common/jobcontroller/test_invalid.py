"""Every kind's invalid jobs are reported on the job, once, and never crash the controller
(divergences D7, D8, D37, D69, D70); the TFJob-only rules (v0.5.3's run-policy placement,
``successPolicy``) stay with the TFJob tests (``unit/controller/v1/tensorflow/test_tfjob_invalid.py``)."""

import logging

import pytest

# What each kind says of a Worker container without an image (v0.5.3's words for a TFJob,
# v1.9's webhook's for a PyTorchJob) and of a missing replica-specs map.
IMAGE_MISSING = {
    "tfjob": "TFJobSpec is not valid: Image is undefined in the container of Worker",
    "pytorchjob": "PyTorchJobSpec is not valid: spec.pytorchReplicaSpecs[Worker].template.spec."
    "containers[0].image: Required value: must be required",
    "paddlejob": "PaddleJobSpec is not valid: spec.paddleReplicaSpecs[Worker].template.spec."
    "containers[0].image: Required value: must be required",
}
SPECS_MISSING = {
    "tfjob": "TFJobSpec is not valid: tfReplicaSpecs is required",
    "pytorchjob": "PyTorchJobSpec is not valid: spec.pytorchReplicaSpecs: Required value: "
    "must be required",
    "paddlejob": "PaddleJobSpec is not valid: spec.paddleReplicaSpecs: Required value: "
    "must be required",
}


def _prefix(k):
    return f"Failed to marshal the object to {k.kind_name}; the spec is invalid: "


def _worker(k, job):
    return job["spec"][k.specs_field]["Worker"]


def _container(k, job):
    return _worker(k, job)["template"]["spec"]["containers"][0]


def _invalid(k, name="bad-tfjob"):
    job = k.new_job(1, name=name)
    _container(k, job)["image"] = ""
    return job


def test_invalid_job_beside_a_valid_one(harness, k):
    bad = harness.add_job(_invalid(k))
    good = harness.add_job(k.new_job(1))
    assert harness.sync(bad) is True
    assert harness.sync(good) is False  # its creates were handed to the helpers
    message = _prefix(k) + IMAGE_MISSING[k.name]
    status = harness.status(bad)
    assert status["conditions"] == [
        {
            "type": "Failed",
            "status": "True",
            "reason": f"Invalid{k.kind_name}Spec",
            "message": message,
            "lastUpdateTime": "2026-01-01T12:00:00Z",
            "lastTransitionTime": "2026-01-01T12:00:00Z",
        }
    ]
    assert f"Warning Invalid{k.kind_name}Spec {message}" in harness.recorder.events
    # Nothing was created for the invalid job; the valid one got its pod and service.
    assert [p["metadata"]["name"] for p in harness.created("pods")] == ["test-tfjob-worker-0"]
    assert [s["metadata"]["name"] for s in harness.created("services")] == ["test-tfjob-worker-0"]


def test_invalid_job_reported_once(harness, k):
    bad = harness.add_job(_invalid(k))
    harness.sync(bad)
    harness.cache_job(harness.stored_job(bad))
    harness.client.clear_actions()
    harness.sync(bad)
    assert harness.actions() == []
    assert sum(f"Invalid{k.kind_name}Spec" in e for e in harness.recorder.events) == 1


@pytest.mark.parametrize(
    "edit, error",
    [
        pytest.param(
            {"runPolicy": {"backoffLimit": -1}},
            "runPolicy.backoffLimit must be within [0, 2147483647]",
            id="runPolicy bounds (D37)",
        ),
        pytest.param(
            {"runPolicy": {"schedulingPolicy": {"minAvailable": -1}}},
            "runPolicy.schedulingPolicy.minAvailable must be within [0, 2147483647]",
            id="minAvailable (D37)",
        ),
        pytest.param(
            {"runPolicy": {"schedulingPolicy": {"minResources": {"cpu": "two"}}}},
            "runPolicy.schedulingPolicy.minResources.cpu is not a quantity (got 'two')",
            id="minResources (D37)",
        ),
    ],
)
def test_what_the_crd_refuses_of_v1_9_fields_fails_the_job(harness, k, edit, error):
    """On a cluster without the CRD's rules the operator refuses the same (D37)."""
    job = k.new_job(1, name="v19-bad")
    job["spec"].update(edit)
    bad = harness.add_job(job)
    assert harness.sync(bad) is True
    expected = _prefix(k) + f"{k.kind_name}Spec is not valid: " + error
    assert harness.status(bad)["conditions"][0]["message"] == expected
    assert harness.created("pods") == []


def test_an_unknown_defaults_release_fails_the_job(harness, k):
    job = k.new_job(1, name="bad-defaults")
    job["metadata"]["annotations"] = {"tf-operator.kubeflow.org/defaults": "v1.8"}
    bad = harness.add_job(job)
    harness.sync(bad)
    assert (
        "unknown release 'v1.8': expected v0.5.3 or v1.9"
        in (harness.status(bad)["conditions"][0]["message"])
    )


def test_malformed_field_is_reported_with_its_path(harness, k):
    job = k.new_job(1, name="malformed")
    _worker(k, job)["replicas"] = "three"
    bad = harness.add_job(job)
    harness.sync(bad)
    message = harness.status(bad)["conditions"][0]["message"]
    assert message.startswith(
        _prefix(k) + f"spec.{k.specs_field}.Worker.replicas: expected an integer"
    )


def test_fixing_the_spec_of_a_failed_invalid_job_keeps_it_failed(harness, k):
    """Failed is final, also when it came from an invalid spec (divergence D8): the fix is
    not run, one Warning says to recreate the job."""
    bad = harness.add_job(_invalid(k))
    harness.sync(bad)
    failed = harness.conditions(bad)
    reported = harness.stored_job(bad)
    fixed = dict(reported, spec=k.new_job(1)["spec"])
    fixed = harness.client.resource(k.resource).update(fixed, namespace="default")  # a user's edit
    harness.cache_job(fixed)
    harness.ctr.job_events.on_update(reported, fixed)
    assert harness.ctr.work_queue.get() == ("default/bad-tfjob", False)
    harness.sync(bad)
    harness.cache_job(harness.stored_job(bad))
    harness.sync(bad)
    reason = f"Invalid{k.kind_name}Spec"
    assert harness.conditions(bad) == failed == [("Failed", "True", reason)]
    assert harness.created("pods") == [] and harness.created("services") == []
    recreate = [e for e in harness.recorder.events if "delete and recreate" in e]
    assert recreate == [
        f"Warning {reason} {k.kind_name} bad-tfjob failed because its spec was invalid and "
        f"Failed is final: delete and recreate the {k.kind_name} to run the fixed spec"
    ]


def test_another_invalid_edit_of_a_failed_invalid_job_changes_nothing(harness, k):
    bad = harness.add_job(_invalid(k))
    harness.sync(bad)
    status = harness.status(bad)
    edited = harness.stored_job(bad)
    _container(k, edited)["image"] = ""
    _worker(k, edited)["restartPolicy"] = "Sometimes"
    harness.cache_job(edited)
    harness.sync(bad)
    harness.cache_job(harness.stored_job(bad))
    harness.sync(bad)
    assert harness.status(bad) == status
    ignored = [e for e in harness.recorder.events if "the edit of its spec is ignored" in e]
    assert len(ignored) == 1


def test_handlers_enqueue_invalid_jobs_without_raising(harness, k):
    bad = harness.add_job(_invalid(k))
    harness.ctr.job_events.on_add(bad)
    harness.ctr.job_events.on_update(bad, bad)
    key, _ = harness.ctr.work_queue.get()
    assert key == "default/bad-tfjob"


def test_process_next_work_item_survives_invalid_and_failing_syncs(harness, k):
    bad = harness.add_job(_invalid(k))
    harness.ctr.work_queue.add("default/bad-tfjob")
    assert harness.ctr.process_next_work_item() is True
    assert harness.status(bad)["conditions"][0]["reason"] == f"Invalid{k.kind_name}Spec"

    def boom(key):
        raise RuntimeError("sync failed")

    harness.ctr.sync_handler = boom
    harness.ctr.work_queue.add("default/bad-tfjob")
    assert harness.ctr.process_next_work_item() is True
    assert harness.ctr.work_queue.num_requeues("default/bad-tfjob") == 1


GARBAGE = {
    "a list": lambda k: [],
    "a string spec": lambda k: {"spec": "x"},
    "a number for a replica spec": lambda k: {"spec": {k.specs_field: {"Worker": 3}}},
    "a number for the conditions": lambda k: {"status": {"conditions": 1}},
}


@pytest.mark.parametrize("raw", GARBAGE.values(), ids=GARBAGE)
def test_decode_rejects_garbage(harness, k, raw):
    with pytest.raises(k.invalid_error):
        k.kind.decode(raw(k), harness.ctr.config.defaults)


def test_invalid_job_on_stale_cache_is_not_reported_twice(harness, k):
    bad = harness.add_job(_invalid(k))
    harness.sync(bad)
    harness.sync(bad)  # the cache has not seen our status write: 409, then found reported
    assert sum(f"Invalid{k.kind_name}Spec" in e for e in harness.recorder.events) == 1


def test_invalid_job_is_logged_once_however_often_it_is_seen(harness, k, caplog):
    bad = harness.add_job(_invalid(k))
    pod = k.new_pod(bad, "worker", 0)
    with caplog.at_level(logging.DEBUG, logger="tf_operator"):
        harness.ctr.job_events.on_add(bad)
        harness.ctr.pods.on_add(pod)  # handlers read metadata only: nothing to decode or log
        for _ in range(3):
            harness.sync(bad)  # the cache misses our write: 409, found reported, silent
        harness.cache_job(harness.stored_job(bad))
        harness.ctr.job_events.on_update(bad, harness.stored_job(bad))
        harness.sync(bad)
    lines = [r for r in caplog.records if IMAGE_MISSING[k.name] in r.getMessage()]
    assert [r.levelname for r in lines] == ["WARNING"]
    assert sum(f"Invalid{k.kind_name}Spec" in e for e in harness.recorder.events) == 1


def test_missing_replica_specs_message_names_the_field(harness, k):
    job = k.new_job(1, name="empty")
    del job["spec"][k.specs_field]
    bad = harness.add_job(job)
    harness.sync(bad)
    message = harness.status(bad)["conditions"][0]["message"]
    assert message == _prefix(k) + SPECS_MISSING[k.name]


@pytest.mark.parametrize("replicas", [2**31 - 1, 2**40])
def test_absurd_replica_count_costs_nothing_and_is_reported(harness, k, replicas):
    """Issue 13, finding 1: v0.5.3 allocated per declared replica (~200 MB/s, for ever)."""
    import tracemalloc

    job = k.new_job(1, name="absurd")
    _worker(k, job)["replicas"] = replicas
    harness.cache_job({**job, "metadata": {**job["metadata"], "uid": "u-absurd"}})
    with pytest.raises(k.invalid_error, match="at most 1000"):
        k.kind.decode(harness.job_informer.get_indexer().get(job), harness.ctr.config.defaults)
    bad = harness.add_job(job)
    tracemalloc.start()
    try:
        harness.sync(bad)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000
    message = harness.status(bad)["conditions"][0]["message"]
    assert message == (
        _prefix(k)
        + f"{k.kind_name}Spec is not valid: replicas of Worker must be at most 1000 (got {replicas})"
    )
    assert any(e.startswith(f"Warning Invalid{k.kind_name}Spec") for e in harness.recorder.events)
    assert harness.created("pods") == harness.created("services") == []
    # Deleting it frees everything kept for it (divergence D5).
    harness.job_informer.get_indexer().delete(harness.stored_job(bad))
    harness.sync(bad)
    assert harness.ctr.memory.forget("default/absurd") is False


MISNAMED = ["UpperCase", "a b", "-lead", "a_b", "naïve", "my.job"]


@pytest.mark.parametrize("name", MISNAMED)
def test_job_whose_name_cannot_name_its_services_fails_with_a_warning(
    harness, k, monkeypatch, name
):
    """Issue 13, finding 5. Where admission lets such a name through (only `my.job` passes
    a real API server's name rule; the CRD's CEL rule refuses it), nothing is created and the
    job is Failed with a Warning event (whose own name the recorder makes valid)."""
    from localcluster.controlplane.emulated.admission import validation

    monkeypatch.setattr(validation, "validate_name", lambda *a, **kw: [])  # stored as is
    bad = harness.add_job(k.new_job(1, name=name))
    harness.sync(bad)
    condition = harness.status(bad)["conditions"][0]
    assert (condition["type"], condition["reason"]) == ("Failed", f"Invalid{k.kind_name}Spec")
    assert "DNS-1035" in condition["message"]
    assert any(e.startswith(f"Warning Invalid{k.kind_name}Spec") for e in harness.recorder.events)
    assert harness.created("pods") == harness.created("services") == []


@pytest.mark.parametrize("port", [70000, 0, True, 2222.5, "2222", "abc"])
def test_a_bad_container_port_fails_the_job_with_a_warning(harness, k, port):
    """What the CRD refuses of ports, for a cluster that does not enforce it (issue 27, item
    5, D69): v0.5.3 ran 70000, 0, true, 2222.5 and "2222" into TF_CONFIG and left "abc"
    Created for good with an exception in its log."""
    body = k.new_job(1, name="port-job")
    _container(k, body)["ports"] = [{"name": k.port_name, "containerPort": port}]
    job = harness.add_job(body)
    assert harness.sync(job) is True
    assert harness.created("pods") == [] and harness.created("services") == []
    (condition,) = harness.status(job)["conditions"]
    assert (condition["type"], condition["reason"]) == ("Failed", f"Invalid{k.kind_name}Spec")
    assert condition["message"].endswith(
        f"{k.kind_name}Spec is not valid: port '{k.port_name}' of container '{k.container}' "
        f"in Worker: containerPort must be an integer between 1 and 65535 (got {port!r})"
    )
    assert any(e.startswith(f"Warning Invalid{k.kind_name}Spec") for e in harness.recorder.events)


def _nest(depth):
    value: dict = {}
    for _ in range(depth - 1):
        value = {"x": value}
    return value


@pytest.mark.parametrize("depth", [150, 300])
def test_a_spec_nested_too_deep_fails_the_job_naming_the_cause(harness, k, depth):
    """Issue 27, item 4: kube-apiserver stores 10,000 levels; v0.5.3's port logged orjson's
    "Recursion limit reached" forever and the job never got a status (D70)."""
    body = k.new_job(1, name="deep")
    _worker(k, body)["template"]["metadata"] = {"x": _nest(depth)}
    job = harness.add_job(body)
    assert harness.sync(job) is True
    assert harness.created("pods") == []
    (condition,) = harness.status(job)["conditions"]
    assert (condition["type"], condition["reason"]) == ("Failed", f"Invalid{k.kind_name}Spec")
    assert (
        f"levels of objects and arrays (at spec.{k.specs_field}.Worker.template.metadata.x"
        in (condition["message"])
    )
    assert "the operator runs specs at most 100 levels deep" in condition["message"]
    harness.cache_job(harness.stored_job(job))
    harness.client.clear_actions()
    harness.sync(job)
    assert harness.actions() == []  # reported once; nothing more to do


def test_a_spec_as_deep_as_allowed_runs(harness, k):
    body = k.new_job(1, name="deep-enough")
    # spec > <kind>ReplicaSpecs > Worker > template > metadata > x: 5 levels above the nest
    _worker(k, body)["template"]["metadata"] = {"x": _nest(95)}
    job = harness.add_job(body)
    harness.sync(job)
    assert [p["metadata"]["name"] for p in harness.created("pods")] == ["deep-enough-worker-0"]
