"""The gang overlays deployed the same way: the operator runs with
``--enable-gang-scheduling``, creates a PodGroup for the job through its own RBAC (the
component's PodGroup rule), weighs the replicas by their PriorityClass for Volcano and
scheduler-plugins (the component's PriorityClass reader), the gang's pods are bound together
(by the test, standing in for kube-batch / Volcano unless the cluster runs one, which also
admits Volcano's group first), the job succeeds and the operator deletes the PodGroup; a job
naming a queue that does not exist is told so (kube-batch, Volcano: the component's Queue
reader); no 403 all along. The Volcano component also runs with the namespaced overlay: PodGroups through its
Role, PriorityClasses through the component's ClusterRole."""

import pytest

from localcluster.testing import wait_for
from support.kustomize import combined_kustomization

from .conftest import NAMESPACE, in_cluster, metric, needs_mount_namespaces

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
PRIORITY_CLASSES = ("scheduling.k8s.io", "v1", "priorityclasses")
PRIORITY_CLASS = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "training"},
    "value": 1000,
}
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
QUEUED = ("gang-kube-batch", "gang-volcano")  # their schedulers have queues


def queued_job(name: str, queue: str) -> dict:
    container = {"name": "tensorflow", "image": "tensorflow/tensorflow:1.13.1"}
    worker = {"replicas": 1, "template": {"spec": {"containers": [container]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {
            "runPolicy": {"schedulingPolicy": {"queue": queue}},
            "tfReplicaSpecs": {"Worker": worker},
        },
    }


def blocked(client, namespace: str, name: str) -> str:
    conditions = (client.get(TFJOBS, namespace, name).get("status") or {}).get("conditions")
    created = [c for c in conditions or [] if c["type"] == "Created"]
    return str(created[0].get("message") or "") if created else ""


CASES = [pytest.param(overlay, False, id=overlay) for overlay in PODGROUPS] + [
    pytest.param("gang-volcano", True, id="namespaced-gang-volcano")
]


@pytest.mark.parametrize(("overlay", "namespaced"), CASES)
def test_gang_overlay(tmp_path, control_plane, overlay, namespaced):
    with in_cluster(control_plane, tmp_path) as incluster:
        client = incluster.client
        if namespaced:  # the operator of overlays/namespaced, with the gang component added
            applied = incluster.apply(combined_kustomization(tmp_path, "namespaced", overlay))
            assert "role.rbac.authorization.k8s.io/tf-job-operator created" in applied
            assert "clusterrole.rbac.authorization.k8s.io/tf-job-operator " not in applied
        else:
            applied = incluster.apply(overlay)
        namespace = NAMESPACE if namespaced else "default"
        incluster.rollout()
        wait_for(incluster.leader, 60, what="a leader")
        podgroups = PODGROUPS[overlay]

        def podgroup():
            items = client.list(podgroups, namespace).items
            return items[0] if items else None

        client.create(PRIORITY_CLASSES, None, PRIORITY_CLASS)
        incluster.submit_job("gang", namespace, priority_class="training")
        group = wait_for(podgroup, 60, what="the job's PodGroup")
        assert group["spec"]["minMember"] == 3
        assert group["metadata"]["ownerReferences"][0]["kind"] == "TFJob"
        if overlay == "gang-volcano":
            # play Volcano's enqueue: the pods come once it admits the group (D62)
            admitted = {"status": {"phase": "Inqueue"}}
            client.patch(podgroups, namespace, "gang", admitted, "merge")
        incluster.play_gang_scheduler("gang", namespace, 3, 60)
        incluster.wait_succeeded("gang", namespace)
        # counted after the status write that the test saw
        wait_for(
            lambda: metric(incluster.scrape(), "tf_operator_jobs_successful") >= 1,
            30,
            what="the success counted",
        )
        pods = client.list(("", "v1", "pods"), namespace, label_selector="tf-job-name=gang").items
        assert {p["spec"]["schedulerName"] for p in pods} == {SCHEDULER[overlay]}
        if overlay == "gang-scheduler-plugins":
            joined = [p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] for p in pods]
        else:
            joined = [p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for p in pods]
        assert joined == ["gang"] * len(pods)
        wait_for(lambda: podgroup() is None, 60, what="the PodGroup deleted after the job")
        if overlay in QUEUED:
            # a queue that does not exist is looked up through the component's ClusterRole
            # and told on the job (D157): a 403 would have told nothing
            client.create(TFJOBS, namespace, queued_job("queued", "nosuch"))
            wait_for(
                lambda: "queue nosuch" in blocked(client, namespace, "queued"),
                60,
                what="the missing queue told on the job",
            )
        # minResources (Volcano, scheduler-plugins) read the PriorityClass, and were allowed to
        reads = incluster.operator_responses(200, "get", "priorityclasses")
        assert (reads > 0) is (overlay != "gang-kube-batch")
        assert incluster.operator_responses(403) == 0


WORKLOADS = ("scheduling.k8s.io", "v1beta1", "workloads")
K8S_PODGROUPS = ("scheduling.k8s.io", "v1beta1", "podgroups")


def test_gang_kubernetes_overlay(tmp_path, control_plane):
    """Kubernetes' own gang scheduling deployed from its overlay: nothing installed beside the
    cluster, the operator's RBAC (the component's Workload and PodGroup rules) is enough to make
    the job's Workload and PodGroup and to delete them after the job; the cluster's default
    scheduler binds the gang; no 403 all along (D180)."""
    with in_cluster(control_plane, tmp_path) as incluster:
        client = incluster.client
        incluster.apply("gang-kubernetes")
        incluster.rollout()
        wait_for(incluster.leader, 60, what="a leader")

        def listed(gvr):
            return client.list(gvr, "default").items

        client.create(PRIORITY_CLASSES, None, PRIORITY_CLASS)
        incluster.submit_job("gang", "default", priority_class="training")
        (group,) = wait_for(lambda: listed(K8S_PODGROUPS) or None, 60, what="the PodGroup")
        assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
        assert group["spec"]["priorityClassName"] == "training"
        assert group["metadata"]["ownerReferences"][0]["kind"] == "TFJob"
        (workload,) = listed(WORKLOADS)
        assert group["spec"]["workloadRef"]["workloadName"] == workload["metadata"]["name"]
        incluster.wait_succeeded("gang", "default")
        pods = client.list(("", "v1", "pods"), "default", label_selector="tf-job-name=gang").items
        assert {p["spec"]["schedulerName"] for p in pods} == {"default-scheduler"}
        assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {
            group["metadata"]["name"]
        }
        # the real garbage collector and PodGroup protection take their time
        wait_for(lambda: not listed(K8S_PODGROUPS), 120, what="the PodGroup deleted after the job")
        assert listed(WORKLOADS) == []
        assert incluster.operator_responses(403) == 0
