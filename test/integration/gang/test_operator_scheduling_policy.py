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
    assert tfjob_condition(registry, name, "Created") is not None
    assert tfjob_condition(registry, name, "Running") is None
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
