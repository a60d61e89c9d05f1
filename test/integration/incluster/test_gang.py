"""The gang overlays deployed the same way: the operator runs with
``--enable-gang-scheduling``, creates a PodGroup for the job through its own RBAC (the
component's PodGroup rule), the gang's pods are bound together (by the test, standing in for
kube-batch / Volcano unless the cluster runs one, which also admits Volcano's group first), the
job succeeds and the operator deletes
the PodGroup; no 403 all along."""

import pytest

from localcluster.cluster import LocalCluster
from localcluster.testing import wait_for

from .conftest import InCluster, metric, needs_mount_namespaces

pytestmark = [pytest.mark.integration, needs_mount_namespaces]

PODGROUPS = {
    "gang-kube-batch": ("scheduling.incubator.k8s.io", "v1alpha1", "podgroups"),
    "gang-volcano": ("scheduling.volcano.sh", "v1beta1", "podgroups"),
    "gang-scheduler-plugins": ("scheduling.x-k8s.io", "v1alpha1", "podgroups"),
}
SCHEDULER = {
    "gang-kube-batch": "kube-batch",
    "gang-volcano": "volcano",
    "gang-scheduler-plugins": "scheduler-plugins-scheduler",  # the chart's profile (D75)
}


@pytest.mark.parametrize("overlay", list(PODGROUPS))
def test_gang_overlay(overlay):
    with LocalCluster(kubelet="process") as cluster:
        incluster = InCluster(cluster)
        incluster.apply(overlay)
        incluster.rollout()
        wait_for(incluster.leader, 60, what="a leader")
        podgroups = PODGROUPS[overlay]

        def podgroup():
            items, _ = cluster.registry.list(podgroups, "default")
            return items[0] if items else None

        incluster.submit_job("gang")
        group = wait_for(podgroup, 60, what="the job's PodGroup")
        assert group["spec"]["minMember"] == 3
        assert group["metadata"]["ownerReferences"][0]["kind"] == "TFJob"
        if overlay == "gang-volcano":
            # play Volcano's enqueue: the pods come once it admits the group (D62)
            admitted = {"status": {"phase": "Inqueue"}}
            cluster.registry.patch(podgroups, "default", "gang", admitted, "merge")
        incluster.play_gang_scheduler("gang", "default", 3, 60)
        incluster.wait_succeeded("gang")
        text = incluster.scrape()
        assert metric(text, "tf_operator_jobs_successful") >= 1
        pods, _ = cluster.registry.list(
            ("", "v1", "pods"), "default", label_selector="tf-job-name=gang"
        )
        assert {p["spec"]["schedulerName"] for p in pods} == {SCHEDULER[overlay]}
        if overlay == "gang-scheduler-plugins":
            joined = [p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] for p in pods]
        else:
            joined = [p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for p in pods]
        assert joined == ["gang"] * len(pods)
        wait_for(lambda: podgroup() is None, 60, what="the PodGroup deleted after the job")
        assert incluster.operator_responses(403) == 0
