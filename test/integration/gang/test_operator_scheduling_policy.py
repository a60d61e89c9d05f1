"""training-operator v1.9's schedulingPolicy against the local cluster's batch schedulers (D62):
the e2e gang case of v1.9's SDK tests, a job asking ``minAvailable: 10`` of one replica stays
Created and never Running; once its policy asks 1 the operator updates the PodGroup (v0.5.3
never did) and the job runs to Succeeded. With Volcano the pods wait for the group to be
admitted, the job says so once, and the group carries v1.9's queue and minResources."""

from __future__ import annotations

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.nodepool import NodePool
from localcluster.testing import BACKENDS
from support.crd import install_crds

from .conftest import PODS, TFJOBS, events_about, tfjob_condition, wait_for

pytestmark = pytest.mark.integration

PODGROUPS = {
    "kube-batch": ("scheduling.incubator.k8s.io", "v1alpha1", "podgroups"),
    "volcano": ("scheduling.volcano.sh", "v1beta1", "podgroups"),
}
RUN = {"localcluster.tf-operator.io/run-seconds": "0.5"}


@pytest.fixture(scope="module", params=BACKENDS)
def cluster(request):
    with LocalCluster(
        control_plane=request.param,
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=[NodePool("n", cpu="4", memory="8Gi")],
        batch_schedulers=("kube-batch", "volcano"),
        batch_schedule_period=0.2,
    ) as c:
        install_crds(c.client)
        yield c


def tfjob(name: str, min_available: int) -> dict:
    container = {"name": "tensorflow", "image": "x", "resources": {"requests": {"cpu": "500m"}}}
    worker = {
        "replicas": 1,
        "restartPolicy": "Never",
        "template": {"metadata": {"annotations": RUN}, "spec": {"containers": [container]}},
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "runPolicy": {"schedulingPolicy": {"minAvailable": min_available}},
            "tfReplicaSpecs": {"Worker": worker},
        },
    }


@pytest.mark.parametrize("scheduler", ["kube-batch", "volcano"])
def test_the_pod_group_follows_the_policy_until_the_gang_fits(cluster, start_operator, scheduler):
    registry, podgroups = cluster.client, PODGROUPS[scheduler]
    name = f"policy-{scheduler}"
    start_operator(cluster, "--enable-gang-scheduling=true", f"--gang-scheduler-name={scheduler}")
    registry.create(TFJOBS, "default", tfjob(name, 10))
    group = wait_for(lambda: registry.get(podgroups, "default", name), 30, what="PodGroup")
    assert group["spec"]["minMember"] == 10
    if scheduler == "volcano":
        assert group["spec"]["queue"] == "default"
        assert group["spec"]["minResources"] == {"cpu": "500m"}

    def unschedulable() -> bool:
        status = registry.get(podgroups, "default", name).get("status") or {}
        return any(
            c.get("type") == "Unschedulable" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )

    wait_for(unschedulable, 30, what="the gang of 10 found unschedulable")
    created = tfjob_condition(registry, name, "Created")
    assert tfjob_condition(registry, name, "Running") is None
    # the job says why it waits, on its condition and once as an event (D156)
    why = (
        "runPolicy.schedulingPolicy.minAvailable 10 is above the job's 1 replicas: its gang "
        "can never be placed; the job waits until minAvailable is lowered or replicas are added"
    )
    assert created is not None and created["message"] == f"TFJob {name} is created. Blocked: {why}"
    told = wait_for(lambda: warnings(registry, name, "GangUnsatisfiable"), 30, what="the event")
    assert [(e["message"], e.get("count", 1)) for e in told] == [(why, 1)]
    pods = registry.list(PODS, "default", label_selector=f"tf-job-name={name}").items
    assert all(not p["spec"].get("nodeName") for p in pods)

    # a merge patch, as kubectl edit sends: a full update could race the operator's status writes
    change = {"spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": 1}}}}
    registry.patch(TFJOBS, "default", name, change, "merge")
    wait_for(
        lambda: registry.get(podgroups, "default", name)["spec"]["minMember"] == 1,
        30,
        what="the PodGroup updated",
    )
    wait_for(lambda: tfjob_condition(registry, name, "Succeeded"), 60, what="Succeeded")
    created = tfjob_condition(registry, name, "Created")
    assert created is not None and created["message"] == f"TFJob {name} is created."
    assert [e.get("count", 1) for e in warnings(registry, name, "GangUnsatisfiable")] == [1]


def warnings(client, name: str, reason: str) -> list[dict]:
    return [
        e
        for e in events_about(client, name, "TFJob")
        if e["reason"] == reason and e["type"] == "Warning"
    ]


QUEUES = {
    "kube-batch": ("scheduling.incubator.k8s.io", "v1alpha1", "queues"),
    "volcano": ("scheduling.volcano.sh", "v1beta1", "queues"),
}


@pytest.mark.parametrize("scheduler", ["kube-batch", "volcano"])
def test_a_queue_that_does_not_exist_is_told_until_it_is_made(cluster, start_operator, scheduler):
    """kube-batch and Volcano (as upstream's) leave a group naming a missing queue out of every
    session without a word; the job says it waits for the queue (D157), and runs once it is
    made."""
    registry = cluster.client
    name, queue = f"queue-{scheduler}", f"nosuch-{scheduler}"
    start_operator(cluster, "--enable-gang-scheduling=true", f"--gang-scheduler-name={scheduler}")
    job = tfjob(name, 1)
    job["spec"]["runPolicy"]["schedulingPolicy"]["queue"] = queue
    registry.create(TFJOBS, "default", job)
    why = (
        f"queue {queue} of PodGroup default/{name} does not exist: {scheduler} ignores the "
        "group until it does"
    )

    def blocked() -> bool:
        created = tfjob_condition(registry, name, "Created")
        return created is not None and created["message"].endswith(f" Blocked: {why}")

    wait_for(blocked, 30, what="the Created condition saying why")
    (told,) = wait_for(lambda: warnings(registry, name, "QueueNotFound"), 30, what="the event")
    assert told["message"] == why
    group = registry.get(PODGROUPS[scheduler], "default", name)
    assert not (group.get("status") or {}).get("conditions")  # the scheduler says nothing
    pods = registry.list(PODS, "default", label_selector=f"tf-job-name={name}").items
    assert all(not p["spec"].get("nodeName") for p in pods)
    api_version = "/".join(QUEUES[scheduler][:2])
    registry.create(
        QUEUES[scheduler],
        None,
        {"apiVersion": api_version, "kind": "Queue", "metadata": {"name": queue},
         "spec": {"weight": 1}},
    )  # fmt: skip
    wait_for(lambda: tfjob_condition(registry, name, "Succeeded"), 60, what="Succeeded")
    created = tfjob_condition(registry, name, "Created")
    assert created is not None and created["message"] == f"TFJob {name} is created."
    assert [e.get("count", 1) for e in warnings(registry, name, "QueueNotFound")] == [1]


PRIORITY_CLASSES = ("scheduling.k8s.io", "v1", "priorityclasses")


def test_a_missing_priority_class_refuses_the_pods_and_the_job_says_so(cluster, start_operator):
    """kube-apiserver's Priority admission refuses a pod naming a PriorityClass that does not
    exist (403; the emulator as well); the job says so once (D157), and runs once it is made."""
    registry = cluster.client
    name, pc = "priority", f"nosuch-{cluster.control_plane}"
    start_operator(cluster, "--enable-gang-scheduling=true", "--gang-scheduler-name=kube-batch")
    job = tfjob(name, 1)
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["priorityClassName"] = pc
    registry.create(TFJOBS, "default", job)
    why = (
        f'the API server refuses: pods "{name}-worker-0" is forbidden: no PriorityClass with '
        f"name {pc} was found"
    )

    def blocked() -> bool:
        created = tfjob_condition(registry, name, "Created")
        return created is not None and created["message"].endswith(f" Blocked: {why}")

    wait_for(blocked, 30, what="the Created condition saying why")
    (told,) = wait_for(lambda: warnings(registry, name, "CreateRefused"), 30, what="the event")
    assert told["message"] == why
    assert registry.list(PODS, "default", label_selector=f"tf-job-name={name}").items == []
    registry.create(
        PRIORITY_CLASSES,
        None,
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": pc}, "value": 10},
    )  # fmt: skip
    try:
        wait_for(lambda: tfjob_condition(registry, name, "Succeeded"), 60, what="Succeeded")
        created = tfjob_condition(registry, name, "Created")
        assert created is not None and created["message"] == f"TFJob {name} is created."
        assert [e.get("count", 1) for e in warnings(registry, name, "CreateRefused")] == [1]
    finally:
        registry.delete(PRIORITY_CLASSES, None, pc)


def test_volcano_pods_wait_for_the_group_to_be_admitted(cluster, start_operator):
    """The operator creates no pod before Volcano's enqueue admits the group, and tells the
    job why it waits (one PodGroupPending event)."""
    registry = cluster.client
    start_operator(cluster, "--enable-gang-scheduling=true", "--gang-scheduler-name=volcano")
    # Volcano's own scheduler is not asked to schedule this queue: its group stays Pending
    job = tfjob("queued", 1)
    job["spec"]["runPolicy"]["schedulingPolicy"]["queue"] = "nobody-serves-this"
    registry.create(TFJOBS, "default", job)
    wait_for(
        lambda: [
            e for e in events_about(registry, "queued", "TFJob") if e["reason"] == "PodGroupPending"
        ],
        30,
        what="the PodGroupPending event",
    )
    pods = registry.list(PODS, "default", label_selector="tf-job-name=queued").items
    assert pods == []
    group = registry.get(PODGROUPS["volcano"], "default", "queued")
    assert (group.get("status") or {}).get("phase", "Pending") == "Pending"
