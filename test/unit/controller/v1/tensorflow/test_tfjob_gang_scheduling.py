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
