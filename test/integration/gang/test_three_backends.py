"""The real operator against each of its three gang backends on the local cluster: kube-batch,
Volcano and scheduler-plugins' coscheduling, with the same TFJob.

For each backend: the TFJob runs to Succeeded with its PodGroup in the backend's API and its
pods joined to it as that backend reads them; a gang that can never fit is told on the TFJob as
a Warning ``PodGroupUnschedulable`` event (from the group's condition for kube-batch and
Volcano, D40; from the pods' reasons for scheduler-plugins, D76). For scheduler-plugins, which
alone times gangs out: a gang whose members wait past ``scheduleTimeoutSeconds`` is rejected,
backs off and tries again, and is bound at once when room comes.
"""

from __future__ import annotations

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.kubelet.node import NodeConfig, register_node
from localcluster.nodepool import NodePool
from support.crd import install_crds

from .conftest import PODS, TFJOBS, events_about, tfjob_condition, wait_for

pytestmark = pytest.mark.integration

PODGROUPS = {
    "kube-batch": ("scheduling.incubator.k8s.io", "v1alpha1", "podgroups"),
    "volcano": ("scheduling.volcano.sh", "v1beta1", "podgroups"),
    "scheduler-plugins": ("scheduling.x-k8s.io", "v1alpha1", "podgroups"),
}
POD_SCHEDULER = {
    "kube-batch": "kube-batch",
    "volcano": "volcano",
    "scheduler-plugins": "scheduler-plugins-scheduler",  # the chart's profile name (D75)
}
BACKENDS = list(PODGROUPS)
RUN = {"localcluster.tf-operator.io/run-seconds": "0.5"}
UNSCHEDULABLE = "PodGroupUnschedulable"
# What each backend says of a gang that never fits: kube-batch's fit text, Volcano's gang
# text, scheduler-plugins' PreFilter against the minResources v1.9 computes (12 CPUs asked, 8
# free).
NEVER_FITS = {
    "kube-batch": "0/2 nodes are available, 2 insufficient cpu.",
    "volcano": "tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable",
    "scheduler-plugins": "0/2 nodes are available: resource gap: map[cpu:4].",
}


def cluster_of(pools: list[NodePool]) -> LocalCluster:
    return LocalCluster(
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=pools,
        batch_schedulers=("kube-batch", "volcano"),
        batch_schedule_period=0.2,
        scheduler_plugins=True,
    )


@pytest.fixture(scope="module")
def cluster():
    # two nodes of 4 CPUs: room for the job below, not for the gang that never fits
    with cluster_of([NodePool("n", count=2, cpu="4", memory="8Gi")]) as c:
        install_crds(c.registry)
        yield c


def replica(count: int, cpu: str) -> dict:
    container = {"name": "tensorflow", "image": "x", "resources": {"requests": {"cpu": cpu}}}
    return {
        "replicas": count,
        "restartPolicy": "Never",
        "template": {"metadata": {"annotations": RUN}, "spec": {"containers": [container]}},
    }


def tfjob(name: str, specs: dict, scheduling: dict | None = None) -> dict:
    spec: dict = {"tfReplicaSpecs": specs}
    if scheduling:
        spec["runPolicy"] = {"schedulingPolicy": scheduling}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def pods_of(registry, name: str) -> list[dict]:
    items, _ = registry.list(PODS, "default", label_selector=f"tf-job-name={name}")
    return items


def told(registry, name: str) -> list[str]:
    return [
        e["message"]
        for e in events_about(registry, name, "TFJob")
        if e["type"] == "Warning" and e["reason"] == UNSCHEDULABLE
    ]


def gang_flags(backend: str) -> tuple[str, str]:
    return "--enable-gang-scheduling=true", f"--gang-scheduler-name={backend}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_same_tfjob_succeeds_with_each_backend(cluster, start_operator, backend):
    registry, name = cluster.registry, f"same-{backend}"
    start_operator(cluster, *gang_flags(backend))
    registry.create(
        TFJOBS, "default", tfjob(name, {"PS": replica(1, "500m"), "Worker": replica(2, "1")})
    )
    group = wait_for(lambda: registry.get(PODGROUPS[backend], "default", name), 30, what="group")
    assert group["spec"]["minMember"] == 3

    def bound() -> list[dict] | None:
        pods = pods_of(registry, name)
        return pods if len(pods) == 3 and all(p["spec"].get("nodeName") for p in pods) else None

    for pod in wait_for(bound, 30, what="3 pods bound"):
        meta = pod["metadata"]
        assert pod["spec"]["schedulerName"] == POD_SCHEDULER[backend]
        if backend == "scheduler-plugins":
            assert meta["labels"]["scheduling.x-k8s.io/pod-group"] == name
        else:
            assert meta["annotations"]["scheduling.k8s.io/group-name"] == name
    wait_for(lambda: tfjob_condition(registry, name, "Succeeded"), 30, what="TFJob Succeeded")

    def group_gone() -> bool:
        items, _ = registry.list(PODGROUPS[backend], "default")
        return name not in {i["metadata"]["name"] for i in items}

    wait_for(group_gone, 30, what="PodGroup deleted by the operator")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gang_that_never_fits_is_told_on_the_tfjob(cluster, start_operator, backend):
    registry, name = cluster.registry, f"never-{backend}"
    start_operator(cluster, *gang_flags(backend))
    # three workers of 4 CPUs on two nodes of 4: two would fit, the gang never does
    registry.create(TFJOBS, "default", tfjob(name, {"Worker": replica(3, "4")}))
    try:
        # (before all its pods exist the scheduler may say something else first)
        def never_fits() -> list[str]:
            return [m for m in told(registry, name) if NEVER_FITS[backend] in m]

        (message,) = wait_for(never_fits, 30, what=f"told: {NEVER_FITS[backend]}")
        assert message.startswith(f"PodGroup default/{name} is unschedulable: ")
        pods = pods_of(registry, name)
        assert len(pods) == 3 and not any(p["spec"].get("nodeName") for p in pods)
        assert tfjob_condition(registry, name, "Running") is None
        assert len(told(registry, name)) == len(set(told(registry, name)))  # each told once
    finally:
        registry.delete(TFJOBS, "default", name)


def test_a_scheduler_plugins_gang_that_times_out_backs_off_and_is_placed_when_it_fits(
    start_operator,
):
    """Ten one-CPU workers on a node of nine, their minResources (one CPU) no obstacle: nine
    are held at Permit, the tenth finds no node, and the gap (10%) is too small for PostFilter
    to give up: the held ones wait out the group's scheduleTimeoutSeconds (1 s), are rejected
    together, back off and are held again. A second node lets the whole gang be bound at
    once."""
    with cluster_of([NodePool("n", cpu="9", memory="16Gi")]) as cluster:
        registry, name = cluster.registry, "times-out"
        install_crds(registry)
        start_operator(cluster, *gang_flags("scheduler-plugins"))
        scheduling = {"scheduleTimeoutSeconds": 1, "minResources": {"cpu": "1"}}
        job = tfjob(name, {"Worker": replica(10, "1")}, scheduling)
        registry.create(TFJOBS, "default", job)
        timeout = (
            "0/1 nodes are available: 1 rejected due to timeout after waiting 1s at plugin "
            "Coscheduling."
        )

        def timed_out() -> bool:
            return any(
                e["reason"] == "FailedScheduling" and e["message"] == timeout
                for pod in pods_of(registry, name)
                for e in events_about(registry, pod["metadata"]["name"], "Pod")
            )

        wait_for(timed_out, 60, what="the held members' wait timed out")
        scheduler = cluster.coscheduling
        assert scheduler is not None
        wait_for(lambda: not scheduler.waiting_pods(), 10, what="the gang rejected together")
        wait_for(lambda: len(scheduler.waiting_pods()) == 9, 30, what="held again after back-off")
        assert not any(p["spec"].get("nodeName") for p in pods_of(registry, name))
        assert told(registry, name), "the job is told why its gang waits"
        register_node(cluster.client, NodeConfig("m-0", cpu="4", memory="16Gi"))

        def all_bound() -> bool:
            pods = pods_of(registry, name)
            return len(pods) == 10 and all(p["spec"].get("nodeName") for p in pods)

        wait_for(all_bound, 60, what="the gang bound once it fits")
        wait_for(lambda: tfjob_condition(registry, name, "Succeeded"), 30, what="Succeeded")
