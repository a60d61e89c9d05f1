"""Every kind's pods: ported from v0.5.3's pod_test.go plus its divergences
(docs/divergences.md). The TFJob-only facts (TF_CONFIG, the Chief's master role, the worker-0
rule, v0.5.3's retryable exit codes) stay with the TFJob tests
(``unit/controller/v1/tensorflow/test_tfjob_pod.py``). Where a fact needs more than workers, a
TFJob's setup has PS replicas and a PyTorchJob's a Master (``SETUPS``)."""

import copy

import pytest

from tf_operator.apis.common.v1.types import ReplicaSpec
from tf_operator.common.jobcontroller.pod import set_restart_policy

# Per kind: a job of seven replicas of two types, and who decides a job's success alone (the
# replica whose success finishes a job of it and three workers: worker 0 of a TFJob without a
# Chief, a PyTorchJob's Master).
SETUPS = {
    "tfjob": {"seven": {"Worker": 5, "PS": 2}, "finishing": ({"Worker": 3}, "worker")},
    "pytorchjob": {
        "seven": {"Master": 1, "Worker": 6},
        "finishing": ({"Master": 1, "Worker": 3}, "master"),
    },
    "paddlejob": {
        "seven": {"Master": 1, "Worker": 6},
        "finishing": ({"Master": 1, "Worker": 3}, "master"),
    },
}
RESTART_POLICIES = [
    ("ExitCode", "Never"),
    ("Never", "Never"),
    ("Always", "Always"),
    ("OnFailure", "OnFailure"),
]


def test_add_pod_lowers_expectation_and_enqueues(harness, k):
    job = harness.add_job(k.new_job(1))
    harness.ctr.expectations.expect_creations("default/test-tfjob/worker/pods", 1)
    harness.ctr.pods.on_add(k.new_pod(job, "worker", 0))
    assert harness.ctr.expectations.satisfied_expectations("default/test-tfjob/worker/pods")
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)


def test_add_of_terminating_pod_still_counts_as_its_creation(harness, k):
    job = harness.add_job(k.new_job(1))
    harness.ctr.expectations.expect_creations("default/test-tfjob/worker/pods", 1)
    pod = k.new_pod(job, "worker", 0)
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    harness.ctr.pods.on_add(pod)
    assert harness.ctr.expectations.satisfied_expectations("default/test-tfjob/worker/pods")
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)


def test_add_pod_of_unknown_job_or_foreign_group_is_ignored(harness, k):
    job = harness.add_job(k.new_job(1))
    pod = k.new_pod(job, "worker", 0)
    pod["metadata"]["ownerReferences"][0]["apiVersion"] = "other.io/v1"  # divergence D26
    harness.ctr.pods.on_add(pod)
    pod = k.new_pod(job, "worker", 0)
    pod["metadata"]["ownerReferences"][0]["uid"] = "stale"
    harness.ctr.pods.on_add(pod)
    assert len(harness.ctr.work_queue) == 0


@pytest.mark.parametrize("policy, expected", RESTART_POLICIES)
def test_restart_policy(policy, expected):
    template: dict = {"spec": {}}
    set_restart_policy(template, ReplicaSpec(restart_policy=policy))
    assert template["spec"]["restartPolicy"] == expected


@pytest.mark.parametrize("policy, expected", RESTART_POLICIES)
def test_a_pod_gets_the_restart_policy_its_replica_spec_implies(harness, k, policy, expected):
    job = k.new_job(1)
    job["spec"][k.specs_field]["Worker"]["restartPolicy"] = policy
    harness.sync(harness.add_job(job))
    assert harness.created("pods")[0]["spec"]["restartPolicy"] == expected


def _failed_pod(k, job, index, code):
    pod = k.new_pod(job, "worker", index, "Failed")
    pod["status"]["containerStatuses"] = [
        {"name": k.container, "state": {"terminated": {"exitCode": code}}}
    ]
    return pod


def test_exit_code_retryable_deletes_pod_and_restarts(harness, k):
    job = harness.add_job(k.new_job(1))
    job_dict = harness.stored_job(job)
    job_dict["spec"][k.specs_field]["Worker"]["restartPolicy"] = "ExitCode"
    harness.cache_job(job_dict)
    harness.add_pod(_failed_pod(k, job, 0, 130))
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    assert harness.deleted("pods") == ["test-tfjob-worker-0"]
    assert ("Restarting", "True", f"{k.kind_name}Restarting") in harness.conditions(job)
    assert (
        f"Warning {k.kind_name}Restarting {k.kind_name} test-tfjob is restarting because 1 "
        "Worker replica(s) failed."
    ) in harness.recorder.events
    assert (
        "Normal ExitedWithCode Pod: default.test-tfjob-worker-0 exited with code 130"
        in harness.recorder.events
    )
    # The deletion is expected: no new pod until the informer reports it gone.
    assert not harness.ctr.expectations_met("default/test-tfjob", harness.decoded(job))


def test_exit_code_permanent_fails_job(harness, k):
    job = k.new_job(2)
    job["spec"][k.specs_field]["Worker"]["restartPolicy"] = "ExitCode"
    job = harness.add_job(job)
    harness.add_pod(_failed_pod(k, job, 0, 137))
    harness.add_pod(_failed_pod(k, job, 1, 1))
    harness.add_services(job, "worker", 2)
    harness.sync(job)
    # v0.5.3 showed Restarting here: one retryable pod masked the permanent failure (divergence D12).
    assert ("Failed", "True", f"{k.kind_name}Failed") in harness.conditions(job)
    assert harness.deleted("pods") == ["test-tfjob-worker-0"]


def test_template_restart_policy_warning(harness, k):
    job = k.new_job(1)
    job["spec"][k.specs_field]["Worker"]["template"]["spec"]["restartPolicy"] = "Always"
    job = harness.add_job(job)
    harness.sync(job)
    assert (
        "Warning SettedPodTemplateRestartPolicy Restart policy in pod template will be "
        "overwritten by restart policy in replica spec"
    ) in harness.recorder.events
    # the replica spec's own (its kind's default)
    assert harness.created("pods")[0]["spec"]["restartPolicy"] == k.default_restart_policy


def test_expectations_prevent_second_pod_for_an_index(harness, k):
    job = harness.add_job(k.new_job(2))
    harness.sync(job)
    assert len(harness.created("pods")) == 2
    harness.client.clear_actions()
    # The informer has not delivered the new pods yet: the job must not be reconciled.
    harness.sync(job)
    harness.sync(job)
    assert harness.actions() == []
    # The services and one pod arrive: one pod is still outstanding, so still no sync
    # (v0.5.3 OR-ed the keys and replaced counts, so it would sync here: divergences D1, D2).
    from tf_operator.k8s.client import PODS, SERVICES

    for svc in harness.client.resource(SERVICES).list(namespace="default")["items"]:
        harness.service_informer.get_indexer().add(svc)
        harness.ctr.services.on_add(svc)
    pods = harness.client.resource(PODS).list(namespace="default")["items"]
    harness.pod_informer.get_indexer().add(pods[0])
    harness.ctr.pods.on_add(pods[0])
    harness.client.clear_actions()
    harness.sync(job)
    assert harness.actions() == []
    harness.pod_informer.get_indexer().add(pods[1])
    harness.ctr.pods.on_add(pods[1])
    # The cache still holds the job as first created, the version our first pass's status
    # write replaced: the pass waits for the informer instead of meeting a 409.
    harness.sync(job)
    assert harness.actions() == []
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert harness.created("pods") == []


def test_failed_create_lowers_expectation(harness, k):
    from tf_operator.k8s.client import new_internal_error

    job = harness.add_job(k.new_job(1))
    harness.client.prepend_reactor("create", "pods", lambda a: (True, new_internal_error("boom")))
    assert harness.sync(job) is False  # the failed create requeues the job with backoff
    assert harness.ctr.work_queue.num_requeues("default/test-tfjob") == 1
    # The pods' slow start stops at the failed batch (as Kubernetes controllers do;
    # divergence D46); the services have a slow start of their own and were created, and
    # the status is still written (divergence D27).
    assert len(harness.created("services")) == 1
    assert harness.status(job)["startTime"]
    assert harness.ctr.expectations.satisfied_expectations("default/test-tfjob/worker/pods")
    assert (
        "Warning FailedCreatePod Error creating: Internal error occurred: boom"
        in harness.recorder.events
    )


def test_too_many_pods_for_an_index_deletes_extras(harness, k):
    job = harness.add_job(k.new_job(1))
    harness.add_pod(k.new_pod(job, "worker", 0, "Running"))
    harness.add_pod(k.new_pod(job, "worker", 0, "Running", name="adopted-duplicate"))
    harness.add_pod(k.new_pod(job, "worker", 3, "Running"))  # out of range
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    assert sorted(harness.deleted("pods")) == ["adopted-duplicate", "test-tfjob-worker-3"]
    assert harness.status(job)["replicaStatuses"]["Worker"] == k.replica_status(
        "test-tfjob", "Worker", active=1
    )


def test_exited_with_code_event_is_recorded_once(harness, k):
    job = harness.add_job(k.new_job(2))
    pod = k.new_pod(job, "worker", 1, "Running")
    pod["status"]["containerStatuses"] = [
        {"name": k.container, "state": {"terminated": {"exitCode": 3}}}
    ]
    harness.add_pod(pod)
    harness.add_pod(k.new_pod(job, "worker", 0, "Running"))
    harness.add_services(job, "worker", 2)
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    exited = [e for e in harness.recorder.events if "ExitedWithCode" in e]
    assert exited == ["Normal ExitedWithCode Pod: default.test-tfjob-worker-1 exited with code 3"]


def _pod_version(pod, version):
    pod = copy.deepcopy(pod)
    pod["metadata"]["resourceVersion"] = version
    return pod


def test_update_pod_enqueues_old_owner_at_once_and_new_owner_after_the_batch_period(harness, k):
    first = harness.add_job(k.new_job(1, name="first"))
    second = harness.add_job(k.new_job(1, name="second"))
    old = _pod_version(k.new_pod(first, "worker", 0), "1")
    new = _pod_version(k.new_pod(second, "worker", 0), "2")
    harness.ctr.pods.on_update(old, new)
    queue = harness.ctr.work_queue
    assert queue.get() == ("default/first", False)
    assert len(queue) == 0 and queue.pending_count() == 1
    harness.clock.step(1.0)  # the default --pod-updates-batch-period
    assert queue.get() == ("default/second", False)


def _phase_change(pod, version):
    """``pod`` in a newer version whose phase changed (an update with nothing but a new
    resourceVersion queues no pass, D96)."""
    changed = _pod_version(pod, version)
    changed["status"] = {**changed.get("status", {}), "phase": "Running"}
    return changed


def test_updates_of_a_jobs_pods_within_the_batch_period_make_one_sync(harness, k):
    job = harness.add_job(k.new_job(2))
    queue = harness.ctr.work_queue
    pods = [k.new_pod(job, "worker", i) for i in range(2)]
    for version, pod in enumerate(pods * 3):
        harness.ctr.pods.on_update(_pod_version(pod, "1"), _phase_change(pod, str(version + 2)))
        harness.clock.step(0.1)
    assert len(queue) == 0 and queue.pending_count() == 1
    harness.clock.step(0.4)
    assert queue.get() == ("default/test-tfjob", False)
    assert queue.pending_count() == 0


def test_a_zero_batch_period_syncs_on_every_pod_update(make_harness, k):
    harness = make_harness(pod_updates_batch_period=0)
    job = harness.add_job(k.new_job(1))
    pod = k.new_pod(job, "worker", 0)
    harness.ctr.pods.on_update(_pod_version(pod, "1"), _phase_change(pod, "2"))
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
    assert harness.ctr.work_queue.pending_count() == 0


def test_update_pod_resync_is_ignored(harness, k):
    job = harness.add_job(k.new_job(1))
    pod = k.new_pod(job, "worker", 0)
    pod["metadata"]["resourceVersion"] = "7"
    harness.ctr.pods.on_update(pod, pod)
    assert len(harness.ctr.work_queue) == 0


def test_delete_pod_tombstone_lowers_deletion_expectation(harness, k):
    from tf_operator.k8s.cache import DeletedFinalStateUnknown

    job = harness.add_job(k.new_job(1))
    harness.ctr.expectations.expect_deletions("default/test-tfjob/worker/pods", 1)
    pod = k.new_pod(job, "worker", 0)
    harness.ctr.pods.on_delete(DeletedFinalStateUnknown("default/test-tfjob-worker-0", pod))
    assert harness.ctr.expectations.satisfied_expectations("default/test-tfjob/worker/pods")
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)


def test_orphan_pod_is_adopted_after_live_recheck(harness, k):
    job = harness.add_job(k.new_job(1))
    orphan = k.new_pod(job, "worker", 0, "Running")
    del orphan["metadata"]["ownerReferences"]
    harness.add_pod(orphan)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    assert harness.actions()[:2] == [
        ("get", k.resource.plural, "test-tfjob"),
        ("patch", "pods", "test-tfjob-worker-0"),
    ]
    assert harness.created("pods") == []


def test_a_pass_that_finishes_the_job_creates_none_of_its_missing_pods(harness, k):
    """v0.5.3 created them and then wrote Succeeded; with creates off the worker they would land
    after the final status (divergence D50)."""
    replicas, decides = SETUPS[k.name]["finishing"]
    job = harness.add_job(k.new_job_with(replicas))
    harness.add_pod(k.new_pod(job, decides, 0, "Succeeded"))
    harness.add_services(job, decides, 1)
    assert harness.sync(job) is True  # nothing in flight: the key's backoff is forgotten
    assert ("Succeeded", "True", f"{k.kind_name}Succeeded") in harness.conditions(job)
    assert harness.created("pods") == harness.created("services") == []
    for rt in replicas:
        for plural in ("pods", "services"):
            key = f"default/test-tfjob/{rt.lower()}/{plural}"
            assert harness.ctr.expectations.satisfied_expectations(key)


def _observe_created(harness):
    """Feed what the last pass created to the informers, as the watch would."""
    from tf_operator.k8s.client import PODS, SERVICES

    for plural, informer, owned, resource in (
        ("pods", harness.pod_informer, harness.ctr.pods, PODS),
        ("services", harness.service_informer, harness.ctr.services, SERVICES),
    ):
        for body in harness.created(plural):
            stored = harness.client.resource(resource).get(
                body["metadata"]["name"], namespace="default"
            )
            informer.get_indexer().add(stored)
            owned.on_add(stored)
    harness.client.clear_actions()


def test_a_pass_creates_at_most_its_budget(harness, k):
    """A large job takes its turn: each pass creates at most MAX_CREATIONS_PER_SYNC objects,
    the next runs once the informer saw them (divergence D38)."""
    from tf_operator.common.jobcontroller.context import MAX_CREATIONS_PER_SYNC as BUDGET

    job = harness.add_job(k.new_job(BUDGET + 50))
    harness.sync(job)
    assert len(harness.created("pods")) == BUDGET
    assert harness.created("services") == []
    harness.cache_job(harness.stored_job(job))
    _observe_created(harness)
    harness.sync(job)
    assert len(harness.created("pods")) == 50
    assert len(harness.created("services")) == BUDGET - 50
    _observe_created(harness)
    harness.sync(job)
    assert harness.created("pods") == []
    assert len(harness.created("services")) == 100
    _observe_created(harness)
    harness.sync(job)
    assert harness.created("pods") == harness.created("services") == []


def test_pods_stop_creating_at_their_first_failed_batch(harness, k):
    """A failing job costs one failed pod request per pass, not one per replica (the work
    queue's backoff spaces the passes); the services' own slow start goes on (D38, D46)."""
    from tf_operator.k8s.client import SERVICES, new_invalid

    replicas = SETUPS[k.name]["seven"]
    job = harness.add_job(k.new_job_with(replicas))
    harness.client.prepend_reactor(
        "create", "pods", lambda a: (True, new_invalid("pods", "x", "spec: Invalid value"))
    )
    assert harness.sync(job) is False
    assert harness.ctr.work_queue.num_requeues("default/test-tfjob") == 1  # with backoff
    assert len(harness.client.filter_actions("create", "pods")) == 1  # the first batch
    # the skipped creates' expectations are lowered: the next pass is not held up
    for rt in replicas:
        key = f"default/test-tfjob/{rt.lower()}/pods"
        assert harness.ctr.expectations.satisfied_expectations(key)
    assert len(harness.created("services")) == 7
    assert sum("FailedCreatePod" in e for e in harness.recorder.events) == 1
    # the next pass fails again: the backoff grows instead of starting over
    harness.cache_job(harness.stored_job(job))
    for service in harness.client.resource(SERVICES).list(namespace="default")["items"]:
        harness.service_informer.get_indexer().add(service)  # as the watch delivers them
        harness.ctr.services.on_add(service)
    harness.client.clear_actions()
    assert harness.sync(job) is False
    assert harness.ctr.work_queue.num_requeues("default/test-tfjob") == 2
    assert len(harness.client.filter_actions("create", "pods")) == 1


def test_creates_queued_before_a_pass_fails_still_run(harness, k, monkeypatch):
    """Their expectations are raised when they are queued: dropping them would hold the job
    back until the expectations expire (five minutes)."""
    job = harness.add_job(k.new_job(2))

    def broken(*args, **kwargs):
        raise RuntimeError("status computation failed")

    monkeypatch.setattr(harness.ctr.status, "update_replica_type", broken)
    with pytest.raises(RuntimeError, match="status computation failed"):
        harness.sync(job)
    assert len(harness.created("pods")) == 2
    assert harness.ctr.expectations.get("default/test-tfjob/worker/pods") == (2, 0)


def test_a_finished_jobs_pod_updates_queue_no_pass_but_deletions_still_do(harness, k):
    job = harness.add_job(k.new_job(1))
    key = "default/test-tfjob"
    queue, expectations = harness.ctr.work_queue, harness.ctr.expectations
    harness.ctr.memory.mark_finished(key, job["metadata"]["uid"])
    expectations.expect_deletions(f"{key}/worker/pods", 1)
    pod = k.new_pod(job, "worker", 0, "Running")
    terminating = _pod_version(pod, "2")
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    harness.ctr.pods.on_update(_pod_version(pod, "1"), terminating)
    exited = _pod_version(k.new_pod(job, "worker", 0, "Succeeded"), "3")
    harness.ctr.pods.on_update(_pod_version(pod, "1"), exited)
    assert len(queue) == 0 and queue.pending_count() == 0
    # a pass that failed after issuing its deletes waits for them: a deletion still syncs
    harness.ctr.pods.on_delete(terminating)
    assert expectations.satisfied_expectations(f"{key}/worker/pods")
    assert queue.get() == (key, False)


def test_a_finished_job_still_syncs_for_a_new_pod_or_a_relabelled_one(harness, k):
    job = harness.add_job(k.new_job(1))
    key = "default/test-tfjob"
    harness.ctr.memory.mark_finished(key, job["metadata"]["uid"])
    pod = k.new_pod(job, "worker", 0, "Succeeded")
    harness.ctr.pods.on_add(pod)
    assert harness.ctr.work_queue.get() == (key, False)
    harness.ctr.work_queue.done(key)
    relabelled = _pod_version(pod, "2")
    relabelled["metadata"]["labels"][k.kind.labels.replica_index] = "7"
    harness.ctr.pods.on_update(_pod_version(pod, "1"), relabelled)
    assert harness.ctr.work_queue.pending_count() == 1  # the claim may release it


def test_a_job_this_process_did_not_see_finish_syncs_on_its_pods_deletion(harness, k):
    job = harness.add_job(k.new_job(1))
    harness.ctr.pods.on_delete(k.new_pod(job, "worker", 0))
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
