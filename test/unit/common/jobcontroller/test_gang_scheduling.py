"""Gang scheduling with kube-batch, Volcano and scheduler-plugins, for every kind: PodGroup,
scheduler name, annotations or label, what the job is told (D24, D40, D62, D75, D76, D77).

Where a fact needs more than workers, a TFJob's setup has its PS (and Chief and Evaluator)
and a PyTorchJob's its Master: ``SETUPS`` holds both, with what each must give."""

import pytest

from tf_operator.common.jobcontroller.podgroup import PodGroupEvents
from tf_operator.control.podgroup_control import KUBE_BATCH, SCHEDULER_PLUGINS_BACKEND, VOLCANO
from tf_operator.k8s.cache import DeletedFinalStateUnknown
from tf_operator.k8s.client import PODS, SERVICES, new_forbidden, new_internal_error
from tf_operator.k8s.controller.controller_utils import ControllerRefResolver

BACKENDS = [
    pytest.param("kube-batch", KUBE_BATCH, "scheduling.incubator.k8s.io/v1alpha1", id="kube-batch"),
    pytest.param("volcano", VOLCANO, "scheduling.volcano.sh/v1beta1", id="volcano"),
]
SCHEDULER_PLUGINS = pytest.param(
    "scheduler-plugins",
    SCHEDULER_PLUGINS_BACKEND,
    "scheduling.x-k8s.io/v1alpha1",
    id="scheduler-plugins",
)

# Per kind: every replica type it has, with the group's minMember and the pods' task names;
# the one that is not a worker ("lead": the PS of a TFJob, the Master of a PyTorchJob).
SETUPS = {
    "tfjob": {
        "every type": ({"Worker": 2, "PS": 1, "Chief": 1, "Evaluator": 1}, 5),  # Evaluator too
        "tasks": {"ps", "worker", "chief", "evaluator"},
        "lead": "PS",
    },
    "pytorchjob": {
        "every type": ({"Master": 1, "Worker": 2}, 3),
        "tasks": {"master", "worker"},
        "lead": "Master",
    },
    "paddlejob": {
        "every type": ({"Master": 1, "Worker": 2}, 3),
        "tasks": {"master", "worker"},
        "lead": "Master",
    },
}


def _lead(k):
    return SETUPS[k.name]["lead"]


def _sync_admitted(harness, job, backend):
    """Sync once to create the group; with Volcano, admit it (as its enqueue action does) and
    sync again: only then are the pods created (training-operator v1.9's Inqueue gating)."""
    harness.sync(job)
    if backend is VOLCANO:
        _set_group_status(harness, backend, {"phase": "Inqueue"})
        harness.cache_job(harness.stored_job(job))  # the first pass's status write
        harness.sync(job)


def _observe_created(harness):
    """The informers deliver the pods and services the passes created."""
    for resource, informer, owned in (
        (PODS, harness.pod_informer, harness.ctr.pods),
        (SERVICES, harness.service_informer, harness.ctr.services),
    ):
        for obj in harness.client.resource(resource).list(namespace="default")["items"]:
            if informer.get_indexer().get(obj) is None:
                informer.get_indexer().add(obj)
                owned.on_add(obj)


def _group_events(harness, k):
    owners = ControllerRefResolver(k.kind_name, "kubeflow.org", harness.ctr.job_lister)
    return PodGroupEvents(owners, harness.ctr.work_queue)


def _drain(queue):
    while len(queue):
        key, _ = queue.get()
        queue.done(key)


@pytest.mark.parametrize("scheduler, backend, api_version", BACKENDS)
def test_pod_group_and_pod_decoration(make_harness, k, scheduler, backend, api_version):
    harness = make_harness(gang=True, scheduler=scheduler)
    replicas, members = SETUPS[k.name]["every type"]
    job = harness.add_job(k.new_job_with(replicas))
    _sync_admitted(harness, job, backend)
    group = harness.client.resource(backend.pod_groups).get("test-tfjob", "default")
    assert group["apiVersion"] == api_version
    assert group["spec"]["minMember"] == members  # Σ replicas
    assert group["metadata"]["ownerReferences"] == [k.owner_ref(job)]
    pods = {p["metadata"]["name"]: p for p in harness.created("pods")}
    assert len(pods) == members
    for name, pod in pods.items():
        rt = name.split("-")[2]
        assert pod["spec"]["schedulerName"] == scheduler
        assert pod["metadata"]["annotations"] == {
            "scheduling.k8s.io/group-name": "test-tfjob",
            "volcano.sh/task-spec": rt,
        }
    tasks = {p["metadata"]["annotations"]["volcano.sh/task-spec"] for p in pods.values()}
    assert tasks == SETUPS[k.name]["tasks"]


def test_custom_scheduler_is_kept_for_that_pod_only(make_harness, k):
    harness = make_harness(gang=True, scheduler="volcano")
    lead = _lead(k)
    job = k.new_job_with({"Worker": 1, lead: 1})
    job["spec"][k.specs_field][lead]["template"]["spec"]["schedulerName"] = "my-scheduler"
    job = harness.add_job(job)
    _sync_admitted(harness, job, VOLCANO)
    schedulers = {
        p["metadata"]["name"]: p["spec"]["schedulerName"] for p in harness.created("pods")
    }
    # v0.5.3 dropped gang scheduling for the whole job in this case (divergence D24).
    assert schedulers == {
        f"test-tfjob-{lead.lower()}-0": "my-scheduler",
        "test-tfjob-worker-0": "volcano",
    }
    assert (
        "Warning SettedPodTemplateSchedulerName Another scheduler is specified when "
        "gang-scheduling is enabled and it will not be overwritten"
    ) in harness.recorder.events


def test_pod_group_min_member_follows_replicas(make_harness, k):
    harness = make_harness(gang=True)
    job = harness.add_job(k.new_job(2))
    harness.sync(job)
    changed = harness.stored_job(job)
    changed["spec"][k.specs_field]["Worker"]["replicas"] = 3
    harness.cache_job(changed)
    _observe_created(harness)
    harness.sync(job)
    group = harness.client.resource(KUBE_BATCH.pod_groups).get("test-tfjob", "default")
    assert group["spec"]["minMember"] == 3


@pytest.mark.parametrize("scheduler, backend, api_version", [*BACKENDS, SCHEDULER_PLUGINS])
def test_pod_group_deleted_when_job_finishes(make_harness, k, scheduler, backend, api_version):
    harness = make_harness(gang=True, scheduler=scheduler)
    job = harness.add_job(k.new_job(1))
    harness.add_pods(job, "worker", succeeded=1)
    harness.add_services(job, "worker", 1)
    _sync_admitted(harness, job, backend)  # → Succeeded
    assert ("Succeeded", "True", f"{k.kind_name}Succeeded") in harness.conditions(job)
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)  # terminal branch
    assert harness.deleted("podgroups") == ["test-tfjob"]
    assert "Normal SuccessfulDeletePodGroup Deleted PodGroup: test-tfjob" in harness.recorder.events


def test_no_gang_scheduling_means_no_decoration(harness, k):
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    pod = harness.created("pods")[0]
    assert "schedulerName" not in pod["spec"]
    assert "annotations" not in pod["metadata"]
    assert harness.actions("*", "podgroups") == []


def _set_group_status(harness, backend, status):
    groups = harness.client.resource(backend.pod_groups)
    group = groups.get("test-tfjob", "default")
    group["status"] = status
    # The fake serves PodGroups with a status subresource; Volcano's CRD has none, and the
    # operator never writes a group's status, so either way works here.
    return groups.update_status(group, namespace="default")


def _unschedulable(phase, message):
    return {
        "phase": phase,
        "conditions": [
            {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
             "message": message}
        ],
    }  # fmt: skip


@pytest.mark.parametrize("scheduler, backend, api_version", BACKENDS)
def test_unschedulable_pod_group_is_told_once_per_message(
    make_harness, k, scheduler, backend, api_version
):
    """Issue 9: the job says why its gang cannot be placed: one Warning event per change of
    the PodGroup's Unschedulable message, while the group is not placed (divergence D40)."""
    harness = make_harness(gang=True, scheduler=scheduler)
    job = harness.add_job(k.new_job(2))
    _sync_admitted(harness, job, backend)  # creates the group, the pods and the services
    harness.cache_job(harness.stored_job(job))
    _observe_created(harness)
    reason = "Warning PodGroupUnschedulable PodGroup default/test-tfjob is unschedulable: "

    def told():
        return [e.removeprefix(reason) for e in harness.recorder.events if e.startswith(reason)]

    for phase, message, expected in [
        ("Pending", "2/2 tasks in gang unschedulable", ["2/2 tasks in gang unschedulable"]),
        ("Pending", "2/2 tasks in gang unschedulable", []),  # unchanged: not again
        ("Inqueue", "1/2 tasks in gang unschedulable", ["1/2 tasks in gang unschedulable"]),
        ("Running", "1/2 tasks in gang unschedulable", []),  # placed: the condition is stale
        ("Unknown", "1/2 tasks in gang unschedulable", ["1/2 tasks in gang unschedulable"]),
    ]:
        _set_group_status(harness, backend, _unschedulable(phase, message))
        harness.recorder.clear()
        harness.sync(job)
        assert told() == expected, (phase, message)


def test_pod_group_status_change_brings_its_job_back(make_harness, k):
    harness = make_harness(gang=True)
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    _drain(harness.ctr.work_queue)
    events = _group_events(harness, k)
    group = harness.client.resource(KUBE_BATCH.pod_groups).get("test-tfjob", "default")
    events.on_update(group, group)
    assert len(harness.ctr.work_queue) == 0  # nothing the operator cares about changed
    stuck = {**group, "status": _unschedulable("Pending", "0/1 nodes are available")}
    events.on_update(group, stuck)
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)


def test_a_deleted_pod_group_brings_its_job_back_at_once(make_harness, k):
    """Issue 27, Low: deleted under a waiting gang, the PodGroup came back only at the
    job's resync (30 s); its deletion queues the job, whose pass makes it again."""
    harness = make_harness(gang=True)
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    _drain(harness.ctr.work_queue)
    events = _group_events(harness, k)
    group = harness.client.resource(KUBE_BATCH.pod_groups).get("test-tfjob", "default")
    events.on_delete(group)
    key, _ = harness.ctr.work_queue.get()
    assert key == "default/test-tfjob"
    harness.ctr.work_queue.done(key)
    events.on_delete(DeletedFinalStateUnknown("default/test-tfjob", group))  # a missed delete
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)


# ---- training-operator v1.9's schedulingPolicy (D62) ----------------------------------------


def _with_policy(k, scheduling, replicas):
    job = k.new_job_with(replicas)
    job["spec"]["runPolicy"] = {"schedulingPolicy": scheduling}
    return job


def _requesting(k, job, rtype, cpu):
    container = job["spec"][k.specs_field][rtype]["template"]["spec"]["containers"][0]
    container["resources"] = {"requests": {"cpu": cpu}}
    return job


@pytest.mark.parametrize(
    "scheduler, backend, expected",
    [
        pytest.param(
            "kube-batch",
            KUBE_BATCH,
            {"minMember": 2, "queue": "research", "priorityClassName": "high"},
            id="kube-batch",
        ),
        pytest.param(
            "volcano",
            VOLCANO,
            {
                "minMember": 2,
                "queue": "research",
                "priorityClassName": "high",
                # the first two pods: the PS (the Master) 1, a worker 500m
                "minResources": {"cpu": "1500m"},
            },
            id="volcano",
        ),
        pytest.param(
            "scheduler-plugins",
            SCHEDULER_PLUGINS_BACKEND,
            {"minMember": 2, "minResources": {"cpu": "1500m"}},
            id="scheduler-plugins",
        ),
    ],
)
def test_scheduling_policy_makes_the_pod_group(make_harness, k, scheduler, backend, expected):
    harness = make_harness(gang=True, scheduler=scheduler)
    lead = _lead(k)
    policy = {"minAvailable": 2, "queue": "research", "priorityClass": "high"}
    job = _with_policy(k, policy, {"Worker": 3, lead: 1})
    job = harness.add_job(_requesting(k, _requesting(k, job, lead, "1"), "Worker", "500m"))
    harness.sync(job)
    group = harness.client.resource(backend.pod_groups).get("test-tfjob", "default")
    assert group["spec"] == expected


def test_volcano_defaults_are_v1_9s(make_harness, k):
    harness = make_harness(gang=True, scheduler="volcano")
    job = harness.add_job(_requesting(k, k.new_job(2), "Worker", "2"))
    harness.sync(job)
    group = harness.client.resource(VOLCANO.pod_groups).get("test-tfjob", "default")
    assert group["spec"] == {"minMember": 2, "queue": "default", "minResources": {"cpu": "4"}}


@pytest.mark.parametrize("scheduler, backend, api_version", [*BACKENDS, SCHEDULER_PLUGINS])
def test_the_pod_group_follows_the_policy(make_harness, k, scheduler, backend, api_version):
    """v1.9's e2e gang case: a job asking minAvailable 10 of one replica never places; once
    its policy asks 1, the PodGroup says so (v0.5.3 never updated a PodGroup)."""
    harness = make_harness(gang=True, scheduler=scheduler)
    job = harness.add_job(_with_policy(k, {"minAvailable": 10}, {"Worker": 1}))
    harness.sync(job)
    groups = harness.client.resource(backend.pod_groups)
    assert groups.get("test-tfjob", "default")["spec"]["minMember"] == 10
    _observe_created(harness)
    changed = harness.stored_job(job)
    changed["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] = 1
    changed = harness.client.resource(harness.ctr.kind.resource).update(changed, "default")
    harness.cache_job(changed)
    harness.sync(job)
    assert groups.get("test-tfjob", "default")["spec"]["minMember"] == 1


def test_volcano_holds_the_pods_until_it_admits_the_group(make_harness, k):
    """v1.9's Inqueue gating, told once on the job per wait (D62)."""
    harness = make_harness(gang=True, scheduler="volcano")
    job = harness.add_job(k.new_job(2))
    waiting = (
        "Normal PodGroupPending PodGroup default/test-tfjob waits to be admitted by volcano "
        "(phase not set yet); the pods are created once it is"
    )
    harness.sync(job)
    assert harness.created("pods") == [] and harness.created("services") == []
    assert harness.recorder.events.count(waiting) == 1
    status = harness.status(job)
    assert [c["type"] for c in status["conditions"]] == ["Created"]
    assert "startTime" not in status
    harness.cache_job(harness.stored_job(job))
    _set_group_status(harness, VOLCANO, {"phase": "Pending"})
    harness.recorder.clear()
    harness.sync(job)
    assert harness.recorder.events == [waiting.replace("not set yet", "Pending")]
    _set_group_status(harness, VOLCANO, {"phase": "Inqueue"})
    harness.sync(job)
    assert len(harness.created("pods")) == 2 and len(harness.created("services")) == 2


def test_volcano_holds_the_pods_when_the_group_cannot_be_made(make_harness, k):
    harness = make_harness(gang=True, scheduler="volcano")
    harness.client.prepend_reactor("get", "podgroups", lambda a: (True, new_internal_error("x")))
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    assert harness.created("pods") == []
    assert (
        "Normal PodGroupPending PodGroup default/test-tfjob could not be read or created; the "
        "pods wait for it"
    ) in harness.recorder.events


def test_kube_batch_creates_the_pods_at_once(make_harness, k):
    """kube-batch has no admission phase: v0.5.3's behaviour."""
    harness = make_harness(gang=True)
    job = harness.add_job(k.new_job(2))
    harness.sync(job)
    assert len(harness.created("pods")) == 2


def test_a_group_phase_change_brings_its_job_back(make_harness, k):
    harness = make_harness(gang=True, scheduler="volcano")
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    events = _group_events(harness, k)
    _drain(harness.ctr.work_queue)
    group = harness.client.resource(VOLCANO.pod_groups).get("test-tfjob", "default")
    events.on_update(group, {**group, "status": {"phase": "Inqueue"}})
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)


# ---- scheduler-plugins (D75, D76) --------------------------------------------------------


def test_scheduler_plugins_group_and_pods_as_v1_9_writes_them(make_harness, k):
    harness = make_harness(gang=True, scheduler="scheduler-plugins")
    job = _with_policy(k, {"scheduleTimeoutSeconds": 30}, {"Worker": 2, _lead(k): 1})
    job = harness.add_job(_requesting(k, job, "Worker", "1"))
    harness.sync(job)  # no admission phase: the pods come at once
    group = harness.client.resource(SCHEDULER_PLUGINS_BACKEND.pod_groups).get(
        "test-tfjob", "default"
    )
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert group["spec"] == {
        "minMember": 3,
        "minResources": {"cpu": "2"},  # every pod: the PS (the Master) asks for nothing
        "scheduleTimeoutSeconds": 30,
    }
    pods = harness.created("pods")
    assert len(pods) == 3
    for pod in pods:
        # the name scheduler-plugins' chart serves (v1.9 wrote "scheduler-plugins": D75)
        assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "test-tfjob"
        assert "annotations" not in pod["metadata"]


def test_another_name_is_a_scheduler_plugins_profile(make_harness, k):
    """training-operator v1.9: a name other than volcano is scheduler-plugins' under it."""
    harness = make_harness(gang=True, scheduler="my-coscheduler")
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    assert harness.client.resource(SCHEDULER_PLUGINS_BACKEND.pod_groups).get(
        "test-tfjob", "default"
    )["spec"] == {"minMember": 1}  # no requests: an empty minResources is left out
    (pod,) = harness.created("pods")
    assert pod["spec"]["schedulerName"] == "my-coscheduler"


def _unscheduled(harness, name, message):
    """The scheduler says why a pod of the job is not placed (as the informer delivers it)."""
    indexer = harness.pod_informer.get_indexer()
    for pod in indexer.list():
        if pod["metadata"]["name"] == name:
            condition = {"type": "PodScheduled", "status": "False", "message": message}
            updated = {**pod, "status": {**pod.get("status", {}), "conditions": [condition]}}
            indexer.update(updated)
            return
    raise AssertionError(f"no pod {name}")


def test_scheduler_plugins_gang_that_cannot_be_placed_is_told_from_its_pods(make_harness, k):
    """D76: scheduler-plugins writes no Unschedulable condition; while its group is not
    placed, the reason its pods give is told on the job, once per change."""
    harness = make_harness(gang=True, scheduler="scheduler-plugins")
    job = harness.add_job(k.new_job(2))
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    _observe_created(harness)
    reason = "Warning PodGroupUnschedulable PodGroup default/test-tfjob is unschedulable: "

    def told():
        return [e.removeprefix(reason) for e in harness.recorder.events if e.startswith(reason)]

    fit = (
        "0/1 nodes are available: 1 Insufficient cpu. PodGroup default/test-tfjob gets "
        "rejected due to Pod test-tfjob-worker-1 is unschedulable even after PostFilter."
    )
    echo = "0/1 nodes are available: 1 optimistic rejection in PostFilter."
    _set_group_status(harness, SCHEDULER_PLUGINS_BACKEND, {"phase": "Scheduling"})
    _unscheduled(harness, "test-tfjob-worker-0", echo)
    _unscheduled(harness, "test-tfjob-worker-1", fit)
    for phase, expected in [("Scheduling", [fit]), ("Scheduling", []), ("Running", [])]:
        _set_group_status(harness, SCHEDULER_PLUGINS_BACKEND, {"phase": phase})
        harness.recorder.clear()
        harness.sync(job)
        assert told() == expected, phase


def test_volcano_gets_the_per_task_minimums_the_job_asks_for(make_harness, k):
    """D77: runPolicy.schedulingPolicy.minTaskMember, keyed by replica type, becomes Volcano's
    minTaskMember keyed by task name (the pods' volcano.sh/task-spec)."""
    harness = make_harness(gang=True, scheduler="volcano")
    lead = _lead(k)
    minimums = {"minTaskMember": {lead: 1, "Worker": 2}}
    job = harness.add_job(_with_policy(k, minimums, {"Worker": 3, lead: 1}))
    harness.sync(job)
    group = harness.client.resource(VOLCANO.pod_groups).get("test-tfjob", "default")
    assert group["spec"]["minTaskMember"] == {lead.lower(): 1, "worker": 2}
    # a client that drops the field (v1.9's types have none): the group loses the minimums
    dropped = harness.stored_job(job)
    del dropped["spec"]["runPolicy"]
    dropped = harness.client.resource(harness.ctr.kind.resource).update(dropped, "default")
    harness.cache_job(dropped)
    harness.sync(job)
    assert (
        "minTaskMember"
        not in harness.client.resource(VOLCANO.pod_groups).get("test-tfjob", "default")["spec"]
    )


# ---- what no scheduler can satisfy: told on the job, which waits (D156, D157) ---------------

ALL_BACKENDS = [*BACKENDS, SCHEDULER_PLUGINS]


def _created_message(harness, job):
    (created,) = [c for c in harness.status(job)["conditions"] if c["type"] == "Created"]
    return created["message"]


def _warnings(harness, reason):
    return [e for e in harness.recorder.events if e.startswith(f"Warning {reason} ")]


@pytest.mark.parametrize("scheduler, backend, api_version", ALL_BACKENDS)
def test_min_available_above_the_replicas_is_told_until_it_is_lowered(
    make_harness, k, scheduler, backend, api_version
):
    """A gang of 10 for a job of 2 pods can never be placed: the job is not failed (v1.9's
    e2e waits on such a job, then lowers minAvailable), but its Created condition says why
    it waits, with one Warning event, not one per pass; lowering minAvailable clears it."""
    harness = make_harness(gang=True, scheduler=scheduler)
    job = harness.add_job(_with_policy(k, {"minAvailable": 10}, {"Worker": 2}))
    why = (
        "runPolicy.schedulingPolicy.minAvailable 10 is above the job's 2 replicas: its gang "
        "can never be placed; the job waits until minAvailable is lowered or replicas are added"
    )
    base = f"{k.kind_name} test-tfjob is created."
    for _ in range(3):
        harness.sync(job)
        harness.cache_job(harness.stored_job(job))
        _observe_created(harness)  # kube-batch and scheduler-plugins: the pods are made
        assert _created_message(harness, job) == f"{base} Blocked: {why}"
        assert "Failed" not in [c[0] for c in harness.conditions(job)]
    assert _warnings(harness, "GangUnsatisfiable") == [f"Warning GangUnsatisfiable {why}"]
    fixed = harness.stored_job(job)
    fixed["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] = 2
    harness.cache_job(harness.client.resource(k.resource).update(fixed, namespace="default"))
    harness.sync(job)
    assert _created_message(harness, job) == base
    group = harness.client.resource(backend.pod_groups).get("test-tfjob", "default")
    assert group["spec"]["minMember"] == 2


@pytest.mark.parametrize("scheduler, backend", [("kube-batch", KUBE_BATCH), ("volcano", VOLCANO)])
def test_a_queue_that_does_not_exist_is_told_until_it_is_created(
    make_harness, k, scheduler, backend, monkeypatch
):
    """kube-batch and Volcano leave a group naming a missing queue out of every session
    without a word; the job says it, once, looks again every 10 s, and clears it once the
    queue exists."""
    harness = make_harness(gang=True, scheduler=scheduler)
    rechecks = []
    monkeypatch.setattr(harness.ctr.work_queue, "add_after", lambda *a: rechecks.append(a))
    job = harness.add_job(_with_policy(k, {"queue": "nosuch"}, {"Worker": 2}))
    why = (
        f"queue nosuch of PodGroup default/test-tfjob does not exist: {scheduler} ignores the "
        "group until it does"
    )
    for _ in range(2):
        harness.sync(job)
        harness.cache_job(harness.stored_job(job))
        _observe_created(harness)  # kube-batch: the pods are made
    assert _created_message(harness, job).endswith(f" Blocked: {why}")
    assert _warnings(harness, "QueueNotFound") == [f"Warning QueueNotFound {why}"]
    assert rechecks[-1] == ("default/test-tfjob", 10.0)
    queue = {"apiVersion": backend.queues.group + "/" + backend.queues.version, "kind": "Queue"}
    harness.client.resource(backend.queues).create({**queue, "metadata": {"name": "nosuch"}})
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert _created_message(harness, job) == f"{k.kind_name} test-tfjob is created."


def test_a_queue_that_cannot_be_read_tells_nothing(make_harness, k):
    """Without RBAC for queues (a 403) nothing is known: nothing is told."""
    harness = make_harness(gang=True, scheduler="volcano")
    harness.client.prepend_reactor(
        "get", "queues", lambda a: (True, new_forbidden("queues", "nosuch", "no RBAC"))
    )
    job = harness.add_job(_with_policy(k, {"queue": "nosuch"}, {"Worker": 2}))
    harness.sync(job)
    assert _created_message(harness, job) == f"{k.kind_name} test-tfjob is created."
    assert _warnings(harness, "QueueNotFound") == []
