"""Gang scheduling with kube-batch and Volcano: PodGroup, scheduler name, annotations."""

import pytest

from tf_operator.control.podgroup_control import KUBE_BATCH, VOLCANO

BACKENDS = [
    pytest.param("kube-batch", KUBE_BATCH, "scheduling.incubator.k8s.io/v1alpha1", id="kube-batch"),
    pytest.param("volcano", VOLCANO, "scheduling.volcano.sh/v1beta1", id="volcano"),
]


@pytest.mark.parametrize("scheduler, backend, api_version", BACKENDS)
def test_pod_group_and_pod_decoration(make_harness, tfu, scheduler, backend, api_version):
    harness = make_harness(gang=True, scheduler=scheduler)
    job = harness.add_job(tfu.new_tfjob(worker=2, ps=1, chief=1, evaluator=1))
    harness.sync(job)
    group = harness.client.resource(backend.pod_groups).get("test-tfjob", "default")
    assert group["apiVersion"] == api_version
    assert group["spec"] == {"minMember": 5}  # Σ replicas, Evaluator included
    assert group["metadata"]["ownerReferences"] == [tfu.owner_ref(job)]
    pods = {p["metadata"]["name"]: p for p in harness.created("pods")}
    assert len(pods) == 5
    for name, pod in pods.items():
        rt = name.split("-")[2]
        assert pod["spec"]["schedulerName"] == scheduler
        assert pod["metadata"]["annotations"] == {
            "scheduling.k8s.io/group-name": "test-tfjob",
            "volcano.sh/task-spec": rt,
        }
    assert {p["metadata"]["annotations"]["volcano.sh/task-spec"] for p in pods.values()} == {
        "ps",
        "worker",
        "chief",
        "evaluator",
    }


def test_custom_scheduler_is_kept_for_that_pod_only(make_harness, tfu):
    harness = make_harness(gang=True, scheduler="volcano")
    job = tfu.new_tfjob(worker=1, ps=1)
    job["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"]["schedulerName"] = "my-scheduler"
    job = harness.add_job(job)
    harness.sync(job)
    schedulers = {
        p["metadata"]["name"]: p["spec"]["schedulerName"] for p in harness.created("pods")
    }
    # v0.5.3 dropped gang scheduling for the whole job in this case (divergence D24).
    assert schedulers == {"test-tfjob-ps-0": "my-scheduler", "test-tfjob-worker-0": "volcano"}
    assert (
        "Warning SettedPodTemplateSchedulerName Another scheduler is specified when "
        "gang-scheduling is enabled and it will not be overwritten"
    ) in harness.recorder.events


def test_pod_group_min_member_follows_replicas(make_harness, tfu):
    harness = make_harness(gang=True)
    job = harness.add_job(tfu.new_tfjob(worker=2))
    harness.sync(job)
    changed = harness.stored_job(job)
    changed["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 3
    harness.cache_job(changed)
    from tf_operator.k8s.client import PODS, SERVICES

    for obj in harness.client.resource(PODS).list(namespace="default")["items"]:
        harness.pod_informer.get_indexer().add(obj)
        harness.ctr.pods.on_add(obj)
    for obj in harness.client.resource(SERVICES).list(namespace="default")["items"]:
        harness.service_informer.get_indexer().add(obj)
        harness.ctr.services.on_add(obj)
    harness.sync(job)
    group = harness.client.resource(KUBE_BATCH.pod_groups).get("test-tfjob", "default")
    assert group["spec"]["minMember"] == 3


@pytest.mark.parametrize("scheduler, backend, api_version", BACKENDS)
def test_pod_group_deleted_when_job_finishes(make_harness, tfu, scheduler, backend, api_version):
    harness = make_harness(gang=True, scheduler=scheduler)
    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.add_pods(job, "worker", succeeded=1)
    harness.add_services(job, "worker", 1)
    harness.sync(job)  # → Succeeded
    assert ("Succeeded", "True", "TFJobSucceeded") in harness.conditions(job)
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)  # terminal branch
    assert harness.deleted("podgroups") == ["test-tfjob"]
    assert "Normal SuccessfulDeletePodGroup Deleted PodGroup: test-tfjob" in harness.recorder.events


def test_no_gang_scheduling_means_no_decoration(harness, tfu):
    job = harness.add_job(tfu.new_tfjob(worker=1))
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
    make_harness, tfu, scheduler, backend, api_version
):
    """Issue 9: the job says why its gang cannot be placed: one Warning event per change of
    the PodGroup's Unschedulable message, while the group is not placed (divergence D40)."""
    from tf_operator.k8s.client import PODS, SERVICES

    harness = make_harness(gang=True, scheduler=scheduler)
    job = harness.add_job(tfu.new_tfjob(worker=2))
    harness.sync(job)  # creates the group, the pods and the services
    harness.cache_job(harness.stored_job(job))
    for resource, informer, owned in (
        (PODS, harness.pod_informer, harness.ctr.pods),
        (SERVICES, harness.service_informer, harness.ctr.services),
    ):
        for obj in harness.client.resource(resource).list(namespace="default")["items"]:
            informer.get_indexer().add(obj)
            owned.on_add(obj)
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


def test_pod_group_status_change_brings_its_job_back(make_harness, tfu):
    from tf_operator.common.jobcontroller.podgroup import PodGroupEvents

    harness = make_harness(gang=True)
    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.sync(job)
    while len(harness.ctr.work_queue):
        key, _ = harness.ctr.work_queue.get()
        harness.ctr.work_queue.done(key)
    from tf_operator.k8s.controller.controller_utils import ControllerRefResolver

    owners = ControllerRefResolver("TFJob", "kubeflow.org", harness.ctr.job_lister)
    events = PodGroupEvents(owners, harness.ctr.work_queue)
    group = harness.client.resource(KUBE_BATCH.pod_groups).get("test-tfjob", "default")
    events.on_update(group, group)
    assert len(harness.ctr.work_queue) == 0  # nothing the operator cares about changed
    stuck = {**group, "status": _unschedulable("Pending", "0/1 nodes are available")}
    events.on_update(group, stuck)
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
