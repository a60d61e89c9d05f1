"""training-operator v1.9's runPolicy.suspend and runPolicy.managedBy: the facts of its
tfjob_controller_test.go (f"{k.kind_name} with suspend semantics") and job_test.go (clean-up while
suspended), on the port's controller (D61, D63)."""

import pytest

from tf_operator.control.podgroup_control import VOLCANO
from tf_operator.k8s.client import PODS, SERVICES

T0 = "2026-01-01T12:00:00Z"
NOW = "2026-01-01T12:00:00Z"  # the harness clock at the start


def _condition(ctype, status, reason, message):
    return {
        "type": ctype,
        "status": status,
        "reason": reason,
        "message": message,
        "lastUpdateTime": T0,
        "lastTransitionTime": T0,
    }


def _suspended(k, suspend=True, **kwargs):
    job = k.new_job(**kwargs)
    job["spec"].setdefault("runPolicy", {})["suspend"] = suspend
    return job


def _without_times(conditions):
    return [
        {k: v for k, v in c.items() if k not in ("lastUpdateTime", "lastTransitionTime")}
        for c in conditions
    ]


def test_a_job_created_suspended_gets_nothing(make_harness, k):
    """f"Shouldn't create resources if {k.kind_name} is suspended": no pod, service or PodGroup, no
    startTime, conditions exactly Created then Suspended."""
    harness = make_harness(gang=True)
    job = harness.add_job(_suspended(k, worker=1, leader=1))
    harness.sync(job)
    assert harness.created("pods") == [] and harness.created("services") == []
    assert harness.actions("create", "podgroups") == []
    status = harness.status(job)
    assert "startTime" not in status
    assert _without_times(status["conditions"]) == [
        {
            "type": "Created",
            "status": "True",
            "reason": f"{k.kind_name}Created",
            "message": f"{k.kind_name} test-tfjob is created.",
        },
        {
            "type": "Suspended",
            "status": "True",
            "reason": f"{k.kind_name}Suspended",
            "message": f"{k.kind_name} test-tfjob is suspended.",
        },
    ]
    assert harness.recorder.events == [
        f"Normal {k.kind_name}Suspended {k.kind_name} test-tfjob is suspended."
    ]


def _running(k):
    return {
        "conditions": [
            _condition(
                "Created", "True", f"{k.kind_name}Created", f"{k.kind_name} test-tfjob is created."
            ),
            _condition(
                "Running", "True", f"{k.kind_name}Running", f"{k.kind_name} test-tfjob is running."
            ),
        ],
        "replicaStatuses": {"Chief": {"active": 1}, "Worker": {"active": 1, "succeeded": 1}},
        "startTime": "2026-01-01T11:00:00Z",
    }


@pytest.mark.parametrize("policy", ["None", "Running", "All"])
def test_suspending_a_running_job_deletes_everything_whatever_the_policy(make_harness, k, policy):
    """f"Should delete resources after {k.kind_name} is suspended": pods and services go whatever the
    cleanPodPolicy, the PodGroup too; active is 0 everywhere; Running turns False with reason
    TFJobSuspended; Suspended is True; startTime is kept."""
    harness = make_harness(gang=True, scheduler="volcano")
    job = _suspended(k, worker=2, leader=1, cleanPodPolicy=policy)
    job = harness.add_job(job, status=_running(k))
    harness.client.resource(VOLCANO.pod_groups).create(
        {"metadata": {"name": "test-tfjob", "namespace": "default"}, "spec": {"minMember": 3}},
        namespace="default",
    )
    harness.add_pods(job, "chief", active=1)
    harness.add_pods(job, "worker", active=1, succeeded=1)
    for rt, count in (("chief", 1), ("worker", 2)):
        harness.add_services(job, rt, count)
    harness.sync(job)
    assert sorted(harness.deleted("pods")) == [
        "test-tfjob-chief-0",
        "test-tfjob-worker-0",
        "test-tfjob-worker-1",
    ]
    assert len(harness.deleted("services")) == 3
    assert harness.deleted("podgroups") == ["test-tfjob"]
    status = harness.status(job)
    assert status["replicaStatuses"] == {"Chief": {}, "Worker": {"succeeded": 1}}
    assert status["startTime"] == "2026-01-01T11:00:00Z"
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("Created", "True", f"{k.kind_name}Created"),
        ("Running", "False", f"{k.kind_name}Suspended"),
        ("Suspended", "True", f"{k.kind_name}Suspended"),
    ]
    assert status["conditions"][1]["message"] == f"{k.kind_name} test-tfjob is suspended."
    assert (
        f"Normal {k.kind_name}Suspended {k.kind_name} test-tfjob is suspended."
        in harness.recorder.events
    )


def _stored_suspended(harness, job):
    """Write the job's spec with runPolicy.suspend flipped, into the store and the cache."""
    current = harness.stored_job(job)
    current["spec"]["runPolicy"]["suspend"] = not current["spec"]["runPolicy"]["suspend"]
    updated = harness.client.resource(harness.ctr.kind.resource).update(current, "default")
    harness.cache_job(updated)
    return updated


def test_a_suspended_job_is_told_once_and_written_once(make_harness, k):
    harness = make_harness()
    job = harness.add_job(_suspended(k, worker=1))
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    harness.client.clear_actions()
    harness.recorder.clear()
    harness.clock.step(60)
    harness.sync(job)
    assert harness.actions("update") == []
    assert harness.recorder.events == []  # v1.9 repeated the event on every pass


def test_resuming_resets_the_start_time_and_recreates_the_pods(make_harness, k):
    """f"Should resume {k.kind_name} after {k.kind_name} is unsuspended": Suspended False (TFJobResumed), a new
    startTime, the pods and services back; once they run, Running comes last."""
    harness = make_harness()
    job = harness.add_job(_suspended(k, worker=1, leader=1), status=_running(k))
    harness.sync(job)  # suspends
    harness.cache_job(harness.stored_job(job))
    harness.clock.step(30)
    job = _stored_suspended(harness, job)  # suspend: false
    harness.recorder.clear()
    harness.sync(job)
    status = harness.status(job)
    assert status["startTime"] == "2026-01-01T12:00:30Z"
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("Created", "True", f"{k.kind_name}Created"),
        ("Running", "False", f"{k.kind_name}Suspended"),
        ("Suspended", "False", f"{k.kind_name}Resumed"),
    ]
    assert (
        f"Normal {k.kind_name}Resumed {k.kind_name} test-tfjob is resumed."
        in harness.recorder.events
    )
    assert sorted(p["metadata"]["name"] for p in harness.created("pods")) == [
        f"test-tfjob-{k.leader.lower()}-0",
        "test-tfjob-worker-0",
    ]
    assert len(harness.created("services")) == 2
    # the pods run
    harness.cache_job(harness.stored_job(job))
    for pod in harness.created("pods"):
        stored = harness.client.resource(PODS).get(pod["metadata"]["name"], "default")
        stored["status"] = {"phase": "Running"}
        harness.pod_informer.get_indexer().add(stored)
        harness.ctr.pods.on_add(stored)
    for svc in harness.created("services"):
        stored = harness.client.resource(SERVICES).get(svc["metadata"]["name"], "default")
        harness.service_informer.get_indexer().add(stored)
        harness.ctr.services.on_add(stored)
    harness.sync(job)
    assert [(c["type"], c["status"]) for c in harness.status(job)["conditions"]] == [
        ("Created", "True"),
        ("Suspended", "False"),
        ("Running", "True"),
    ]


def test_no_deadline_while_suspended_and_it_counts_from_the_resume(make_harness, k):
    harness = make_harness()
    job = _suspended(k, worker=1, run_policy_in="runPolicy", activeDeadlineSeconds=10)
    job["spec"]["runPolicy"]["suspend"] = True
    job = harness.add_job(job, status=_running(k))  # started an hour ago
    harness.sync(job)
    types = {c[0]: c[1] for c in harness.conditions(job)}
    assert types.get("Failed") is None and types["Suspended"] == "True"
    harness.cache_job(harness.stored_job(job))
    job = _stored_suspended(harness, job)
    harness.sync(job)  # resumed: startTime is now
    assert harness.status(job)["startTime"] == NOW
    assert ("Failed", "True", "DeadlineExceeded") not in harness.conditions(job)


def _finished(k, completion=True):
    status = {
        "conditions": [_condition("Succeeded", "True", f"{k.kind_name}Succeeded", "done")],
    }
    if completion:
        status["completionTime"] = T0
    return status


@pytest.mark.parametrize("completion", [True, False], ids=["completed", "no completionTime"])
def test_the_ttl_waits_while_suspended(make_harness, k, completion):
    """job_test.go's clean-up cases: "No error with TTL is set and completionTime is nil, if
    suspended" and the TTL does not fire for a suspended job (upstream's #2239 broke Kueue's
    preemption of a job with a TTL)."""
    harness = make_harness()
    job = _suspended(k, worker=1, ttlSecondsAfterFinished=0)
    job = harness.add_job(job, status=_finished(k, completion))
    harness.clock.step(10)
    assert harness.sync(job) is True  # no error
    assert harness.deleted(k.resource.plural) == []
    harness.cache_job(harness.stored_job(job))
    job = _stored_suspended(harness, job)
    harness.sync(job)
    assert harness.deleted(k.resource.plural) == ["test-tfjob"]


def test_suspending_a_running_job_with_a_ttl_works(make_harness, k):
    harness = make_harness()
    job = _suspended(k, worker=1, ttlSecondsAfterFinished=60)
    job = harness.add_job(job, status=_running(k))
    harness.add_pods(job, "worker", active=1)
    assert harness.sync(job) is True
    assert harness.deleted("pods") == ["test-tfjob-worker-0"]
    assert ("Suspended", "True", f"{k.kind_name}Suspended") in harness.conditions(job)


def test_a_finished_job_stays_finished_when_suspended(make_harness, k):
    harness = make_harness()
    job = harness.add_job(_suspended(k, worker=1), status=_finished(k))
    harness.sync(job)
    assert [c[0] for c in harness.conditions(job)] == ["Succeeded"]


@pytest.mark.parametrize("suspend", [True, False])
def test_a_job_managed_elsewhere_is_left_alone(make_harness, k, suspend):
    """ "Should not reconcile a job while managed by external controller": no pod or service,
    no status write (no Created, no startTime), no event, suspended or not."""
    harness = make_harness(gang=True)
    job = _suspended(k, suspend, worker=1, leader=1)
    job["spec"]["runPolicy"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    job = harness.add_job(job)
    assert harness.sync(job) is True
    assert harness.actions() == []
    assert harness.recorder.events == []
    assert harness.status(job) == {}


def test_a_job_managed_by_the_training_operator_is_ours(make_harness, k):
    harness = make_harness()
    job = _suspended(k, False, worker=1)
    job["spec"]["runPolicy"]["managedBy"] = "kubeflow.org/training-operator"
    job = harness.add_job(job)
    harness.sync(job)
    assert len(harness.created("pods")) == 1


def _active(harness, job):
    return {t: c.get("active", 0) for t, c in harness.status(job)["replicaStatuses"].items()}


def test_created_and_pending_pods_are_active_but_only_running_ones_make_the_job_running(
    make_harness, k
):
    """Kueue reads a job as active while a replica status counts an active pod: the pods a
    pass creates and those still Pending count, as batch/v1 Job counts them, so an admitter
    that evicts the job meanwhile waits for the operator to delete them (D151)."""
    harness = make_harness()
    job = harness.add_job(k.new_job(worker=2, leader=1))
    harness.sync(job)  # creates every pod
    assert _active(harness, job) == {k.leader: 1, "Worker": 2}
    assert [c[0] for c in harness.conditions(job)] == ["Created"]
    harness.cache_job(harness.stored_job(job))
    for pod in harness.created("pods"):
        stored = harness.client.resource(PODS).get(pod["metadata"]["name"], "default")
        stored["status"] = {"phase": "Pending"}
        harness.pod_informer.get_indexer().add(stored)
        harness.ctr.pods.on_add(stored)
    harness.sync(job)
    assert _active(harness, job) == {k.leader: 1, "Worker": 2}
    assert [c[0] for c in harness.conditions(job)] == ["Created"]


def test_a_suspension_is_written_only_once_its_deletions_are_issued(make_harness, k):
    """A failed deletion leaves the status as it was (its pods still active): the pass is
    retried, and only a pass that issued every deletion writes Suspended with active 0 (D151)."""
    from tf_operator.k8s.client import new_internal_error

    harness = make_harness()
    job = harness.add_job(_suspended(k, worker=2, leader=1), status=_running(k))
    harness.add_pods(job, k.leader.lower(), active=1)
    harness.add_pods(job, "worker", pending=1, active=1)
    failing = []

    def refuse_once(action):
        if not failing:
            failing.append(action.name)
            return True, new_internal_error("etcd is slow")
        return False, None

    harness.client.prepend_reactor("delete", "pods", refuse_once)
    with pytest.raises(Exception, match="etcd is slow"):
        harness.sync(job)
    assert "Suspended" not in [c[0] for c in harness.conditions(job)]
    assert _active(harness, job) == {"Chief": 1, "Worker": 1}  # as _running wrote it
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert ("Suspended", "True", f"{k.kind_name}Suspended") in harness.conditions(job)
    assert set(_active(harness, job).values()) == {0}
