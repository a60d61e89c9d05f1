"""Start-up that cannot hang (``lifecyclePolicy.startup``, divergence D104): the first stuck
replica's reason in the Created condition's message and a Warning event, updated as it
changes and removed once it clears; the start-up deadline failing or restarting the job."""

from __future__ import annotations

import pytest

from support.jobkinds import START, TFJOB_CASE, JobHarness
from tf_operator.common.jobcontroller.startup import pod_blocking_reason
from tf_operator.common.jobcontroller.transform import strip_pod
from tf_operator.k8s.client import PODS
from tf_operator.k8s.client.errors import REASON_FORBIDDEN, from_status, status_body

TF = TFJOB_CASE
PULL = {
    "name": "tensorflow",
    "state": {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling "nope:1"'}},
}
UNSCHEDULABLE = {
    "type": "PodScheduled",
    "status": "False",
    "reason": "Unschedulable",
    "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
}


def _job(harness, startup: dict | None, workers: int = 2, **spec) -> dict:
    job = TF.new_job_with({"PS": 1, "Worker": workers}, **spec)
    if startup is not None:
        job["spec"]["lifecyclePolicy"] = {"startup": startup}
    return _recache(harness, harness.add_job(job))


def _recache(harness, job) -> dict:
    """The stored job into the cache; the fake API stamps the wall clock, and the job must
    predate its pods on the test's clock (D67)."""
    stored = harness.stored_job(job)
    stored["metadata"]["creationTimestamp"] = "2026-01-01T11:00:00Z"
    harness.cache_job(stored)
    return stored


def _pod(job, rt, index, phase="Pending", created=START, **status):
    pod = TF.new_pod(job, rt, index, phase)
    pod["metadata"]["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    pod["status"].update(status)
    return pod


def _add(harness, pod):
    stored = harness.add_pod(pod, cache=False)
    stored["metadata"]["creationTimestamp"] = pod["metadata"]["creationTimestamp"]
    harness.pod_informer.get_indexer().add(strip_pod(stored))
    return stored


def _services(harness, job, workers=2):
    harness.add_services(job, "ps", 1)
    harness.add_services(job, "worker", workers)


def _created_message(harness, job) -> str:
    created = next(c for c in harness.status(job)["conditions"] if c["type"] == "Created")
    return created["message"]


def test_the_blocking_reason_of_a_pod_is_read_from_what_the_cache_keeps():
    pulling = {"metadata": {}, "status": {"phase": "Pending", "containerStatuses": [PULL]}}
    assert pod_blocking_reason(strip_pod(pulling)) == 'ImagePullBackOff: Back-off pulling "nope:1"'
    unplaced = {"metadata": {}, "status": {"phase": "Pending", "conditions": [UNSCHEDULABLE]}}
    assert pod_blocking_reason(strip_pod(unplaced)) == f"Unschedulable: {UNSCHEDULABLE['message']}"
    creating = {"name": "tensorflow", "state": {"waiting": {"reason": "ContainerCreating"}}}
    starting = {"metadata": {}, "status": {"phase": "Pending", "containerStatuses": [creating]}}
    assert pod_blocking_reason(strip_pod(starting)) is None
    assert pod_blocking_reason({"metadata": {}, "status": {"phase": "Running"}}) is None


@pytest.mark.parametrize("startup", [None, {}], ids=["none", "policy"])
def test_the_first_stuck_replica_is_told_on_the_created_condition(startup):
    harness = JobHarness(TF)
    job = _job(harness, startup)
    _add(harness, _pod(job, "ps", 0, "Running"))
    _add(harness, _pod(job, "worker", 0, "Running"))
    stuck = _add(harness, _pod(job, "worker", 1, containerStatuses=[PULL]))
    _services(harness, job)
    harness.sync(job)
    message = _created_message(harness, job)
    if startup is None:
        assert message == "TFJob test-tfjob is created."  # as before
        assert not any("ReplicaBlocked" in e for e in harness.recorder.events)
        return
    told = 'pod test-tfjob-worker-1: ImagePullBackOff: Back-off pulling "nope:1"'
    assert message == f"TFJob test-tfjob is created. Blocked: {told}"
    assert harness.recorder.events.count(f"Warning ReplicaBlocked {told}") == 1
    # the reason changes: the message follows, one more event
    stuck["status"] = {"phase": "Pending", "conditions": [UNSCHEDULABLE]}
    harness.pod_informer.get_indexer().update(strip_pod(stuck))
    _recache(harness, job)
    harness.sync(job)
    assert _created_message(harness, job).endswith(f"Unschedulable: {UNSCHEDULABLE['message']}")
    # a pass that finds the same reason writes nothing
    _recache(harness, job)
    harness.client.clear_actions()
    harness.sync(job)
    assert harness.actions("update") == []
    # it clears: the message is the old one again
    stuck["status"] = {"phase": "Running"}
    harness.pod_informer.get_indexer().update(strip_pod(stuck))
    harness.sync(job)
    assert _created_message(harness, job) == "TFJob test-tfjob is created."
    assert sum("ReplicaBlocked" in e for e in harness.recorder.events) == 2


def test_the_start_up_deadline_fails_the_job_with_the_reason_and_stops_its_pods():
    harness = JobHarness(TF)
    job = _job(harness, {"deadlineSeconds": 60}, cleanPodPolicy="None")
    _add(harness, _pod(job, "ps", 0, "Running"))
    _add(harness, _pod(job, "worker", 0, "Running"))
    _add(harness, _pod(job, "worker", 1, containerStatuses=[PULL]))
    _services(harness, job)
    harness.sync(job)
    assert not any(c[0] == "Failed" for c in harness.conditions(job))
    harness.clock.step(61)
    _recache(harness, job)
    harness.sync(job)
    failed = next(c for c in harness.status(job)["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "StartupDeadlineExceeded"
    assert failed["message"] == (
        "TFJob test-tfjob did not start within 60s: pod test-tfjob-worker-1: "
        'ImagePullBackOff: Back-off pulling "nope:1"'
    )
    _recache(harness, job)
    harness.client.clear_actions()
    harness.sync(job)
    # every active pod goes, whatever cleanPodPolicy (None here)
    assert sorted(harness.deleted("pods")) == [
        "test-tfjob-ps-0",
        "test-tfjob-worker-0",
        "test-tfjob-worker-1",
    ]


def test_a_deadline_ahead_requeues_the_job_for_it():
    harness = JobHarness(TF)
    job = _job(harness, {"deadlineSeconds": 60})
    _add(harness, _pod(job, "ps", 0, "Running"))
    _add(harness, _pod(job, "worker", 0, "Running"))
    _add(harness, _pod(job, "worker", 1, created=START))
    _services(harness, job)
    requeued: list[tuple[str, float]] = []
    harness.ctr.startup._requeue_after = lambda key, seconds: requeued.append((key, seconds))
    harness.clock.step(15)
    harness.sync(job)
    assert requeued == [("default/test-tfjob", 45.0)]
    assert not any(c[0] == "Failed" for c in harness.conditions(job))


def test_the_start_up_deadline_can_restart_the_job_instead():
    harness = JobHarness(TF)
    job = _job(harness, {"deadlineSeconds": 60, "action": "RestartJob"}, backoffLimit=2)
    _add(harness, _pod(job, "ps", 0, "Running"))
    _add(harness, _pod(job, "worker", 0, "Running"))
    _add(harness, _pod(job, "worker", 1, conditions=[UNSCHEDULABLE]))
    _services(harness, job)
    harness.clock.step(61)
    harness.sync(job)
    assert not any(c[0] == "Failed" for c in harness.conditions(job))
    assert sorted(harness.deleted("pods")) == [
        "test-tfjob-ps-0",
        "test-tfjob-worker-0",
        "test-tfjob-worker-1",
    ]
    status = harness.status(job)
    assert status["exitCodeRestarts"]["count"] == 1
    assert status["restartsByCause"] == {"StartupDeadline": 1}


def test_a_gang_that_has_not_admitted_the_job_is_told_and_its_deadline_fails_the_job():
    harness = JobHarness(TF, gang=True, scheduler="volcano")
    job = _job(harness, {"deadlineSeconds": 60})
    harness.sync(job)  # the PodGroup is created; Volcano has not admitted it: no pod
    assert harness.created("pods") == []
    message = _created_message(harness, job)
    assert "Blocked: PodGroup default/test-tfjob waits to be admitted by volcano" in message
    harness.clock.step(61)
    _recache(harness, job)
    harness.sync(job)
    failed = next(c for c in harness.status(job)["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "StartupDeadlineExceeded"
    assert "PodGroup default/test-tfjob waits to be admitted" in failed["message"]


def test_what_no_scheduler_can_satisfy_comes_first_and_names_the_deadline_failure():
    """A gang of 10 for 3 pods (D156): its own reason and event, before the gang's wait, and
    the start-up deadline's failure names it."""
    harness = JobHarness(TF, gang=True, scheduler="volcano")
    job = _job(
        harness, {"deadlineSeconds": 60}, runPolicy={"schedulingPolicy": {"minAvailable": 10}}
    )
    harness.sync(job)
    why = (
        "runPolicy.schedulingPolicy.minAvailable 10 is above the job's 3 replicas: its gang can "
        "never be placed; the job waits until minAvailable is lowered or replicas are added"
    )
    assert _created_message(harness, job) == f"TFJob test-tfjob is created. Blocked: {why}"
    assert [e for e in harness.recorder.events if e.startswith("Warning ")] == [
        f"Warning GangUnsatisfiable {why}"
    ]
    harness.clock.step(61)
    _recache(harness, job)
    harness.sync(job)
    failed = next(c for c in harness.status(job)["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "StartupDeadlineExceeded"
    assert failed["message"] == f"TFJob test-tfjob did not start within 60s: {why}"


@pytest.mark.parametrize("ordered", [False, True])
def test_an_ordered_start_creates_the_workers_once_the_ps_and_chief_run(ordered):
    harness = JobHarness(TF)
    job = TF.new_job_with({"Chief": 1, "PS": 2, "Worker": 2})
    job["spec"]["lifecyclePolicy"] = {"startup": {"ordered": ordered}}
    job = _recache(harness, harness.add_job(job))
    harness.sync(job)
    created = sorted(p["metadata"]["name"] for p in harness.created("pods"))
    first = ["test-tfjob-chief-0", "test-tfjob-ps-0", "test-tfjob-ps-1"]
    workers = ["test-tfjob-worker-0", "test-tfjob-worker-1"]
    assert created == (first if ordered else sorted(first + workers))
    if not ordered:
        return
    # the chief and one PS run, the other PS is still pending: the workers still wait
    harness.ctr.expectations.delete_expectations_with_prefix("default/")
    made = {p["metadata"]["name"]: p for p in harness.client.resource(PODS).list()["items"]}

    def observe(name: str, phase: str) -> None:
        pod = made[name]
        pod["metadata"]["creationTimestamp"] = "2026-01-01T12:00:00Z"
        pod["status"] = {"phase": phase}
        harness.pod_informer.get_indexer().update(strip_pod(pod))

    observe("test-tfjob-chief-0", "Running")
    observe("test-tfjob-ps-0", "Running")
    observe("test-tfjob-ps-1", "Pending")
    _recache(harness, job)
    harness.client.clear_actions()
    harness.sync(job)
    assert harness.created("pods") == []
    observe("test-tfjob-ps-1", "Running")
    _recache(harness, job)
    harness.client.clear_actions()
    harness.sync(job)
    assert sorted(p["metadata"]["name"] for p in harness.created("pods")) == workers


@pytest.mark.parametrize("publish", [None, True])
def test_services_publish_not_ready_addresses_when_asked(publish):
    harness = JobHarness(TF)
    startup = {} if publish is None else {"publishNotReadyAddresses": publish}
    job = _job(harness, startup)
    harness.sync(job)
    specs = [s["spec"] for s in harness.created("services")]
    assert len(specs) == 3
    assert all(s.get("publishNotReadyAddresses") is publish for s in specs)


def _quota(used: int) -> str:
    return (
        'pods "test-tfjob-worker-1" is forbidden: exceeded quota: small, requested: pods=1, '
        f"used: pods={used}, limited: pods=2"
    )


@pytest.mark.parametrize("startup", [None, {}], ids=["none", "policy"])
def test_a_create_refused_for_a_quota_is_told_updated_and_cleared(startup):
    harness = JobHarness(TF)
    job = _job(harness, startup)
    _add(harness, _pod(job, "ps", 0, "Running"))
    _add(harness, _pod(job, "worker", 0, "Running"))
    _services(harness, job)
    refused = {"used": 2}

    def quota(action):
        name = action.body["metadata"]["name"]
        if refused["used"] is None or name != "test-tfjob-worker-1":
            return False, None
        return True, from_status(status_body(403, REASON_FORBIDDEN, _quota(refused["used"])))

    harness.client.prepend_reactor("create", "pods", quota)
    # the first pass meets the refusal; the next one (the queue's retry) tells it
    for _ in range(2):
        _recache(harness, job)
        harness.sync(job)
    # told on every job, with a start-up policy or not (D157)
    message = _created_message(harness, job)
    told = f"the API server refuses: {_quota(2)}"
    assert message == f"TFJob test-tfjob is created. Blocked: {told}"
    assert harness.recorder.events.count(f"Warning CreateRefused {told}") == 1
    # the refusal changes (the quota's usage): the message follows
    refused["used"] = 3
    for _ in range(2):
        _recache(harness, job)
        harness.sync(job)
    assert _created_message(harness, job).endswith(f"the API server refuses: {_quota(3)}")
    # the quota is raised: the pod is created, the reason goes
    refused["used"] = None
    _recache(harness, job)
    harness.sync(job)
    created = [p for p in harness.created("pods") if p["metadata"]["name"].endswith("worker-1")]
    assert created, "the refused pod is created once the quota allows it"
    harness.pod_informer.get_indexer().add(strip_pod(_pod(job, "worker", 1, "Running")))
    harness.ctr.expectations.creation_observed("default/test-tfjob/worker/pods")  # the watch
    _recache(harness, job)
    harness.sync(job)
    assert _created_message(harness, job) == "TFJob test-tfjob is created."


def test_a_replica_refused_for_a_quota_fails_the_job_at_the_start_up_deadline():
    harness = JobHarness(TF)
    job = _job(harness, {"deadlineSeconds": 60})
    _add(harness, _pod(job, "ps", 0, "Running"))
    _add(harness, _pod(job, "worker", 0, "Running"))
    _services(harness, job)
    harness.client.prepend_reactor(
        "create",
        "pods",
        lambda a: (True, from_status(status_body(403, REASON_FORBIDDEN, _quota(2)))),
    )
    for _ in range(2):
        _recache(harness, job)
        harness.sync(job)
    assert ("Failed", "True") not in {(t, s) for t, s, _ in harness.conditions(job)}
    harness.clock.step(61)
    _recache(harness, job)
    harness.sync(job)
    failed = next(c for c in harness.status(job)["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "StartupDeadlineExceeded"
    assert f"did not start within 60s: the API server refuses: {_quota(2)}" in failed["message"]
