"""PodGroup sync/delete for both gang-scheduling backends."""

import pytest

from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.control.podgroup_control import (
    KUBE_BATCH,
    VOLCANO,
    PodGroupControl,
    backend_for,
)
from tf_operator.k8s.client import new_internal_error

JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "job", "namespace": "ns", "uid": "u"},
}
OWNER = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "name": "job",
    "uid": "u",
    "controller": True,
    "blockOwnerDeletion": True,
}


@pytest.mark.parametrize(
    "backend, api_version",
    [
        (KUBE_BATCH, "scheduling.incubator.k8s.io/v1alpha1"),
        (VOLCANO, "scheduling.volcano.sh/v1beta1"),
    ],
)
def test_sync_creates_then_updates_min_member(backend, api_version):
    client, recorder = FakeKubeClient(), FakeRecorder()
    control = PodGroupControl(client, recorder, backend)
    control.sync_pod_group(JOB, 3, OWNER)
    group = client.resource(backend.pod_groups).get("job", "ns")
    assert group["apiVersion"] == api_version
    assert group["kind"] == "PodGroup"
    assert group["spec"] == {"minMember": 3}
    assert group["metadata"]["ownerReferences"] == [OWNER]
    client.clear_actions()
    control.sync_pod_group(JOB, 3, OWNER)
    assert [a.verb for a in client.actions] == ["get"]
    control.sync_pod_group(JOB, 5, OWNER)
    assert client.resource(backend.pod_groups).get("job", "ns")["spec"]["minMember"] == 5


def test_sync_does_not_create_on_other_errors():
    client = FakeKubeClient()
    client.prepend_reactor("get", "podgroups", lambda a: (True, new_internal_error("down")))
    with pytest.raises(Exception, match="down"):
        PodGroupControl(client, FakeRecorder(), KUBE_BATCH).sync_pod_group(JOB, 1, OWNER)
    assert not client.filter_actions("create", "podgroups")


def test_delete_pod_group_events():
    client, recorder = FakeKubeClient(), FakeRecorder()
    control = PodGroupControl(client, recorder, VOLCANO)
    control.delete_pod_group(JOB)  # absent: nothing happens
    assert recorder.events == []
    control.sync_pod_group(JOB, 2, OWNER)
    control.delete_pod_group(JOB)
    assert recorder.events == ["Normal SuccessfulDeletePodGroup Deleted PodGroup: job"]
    client.resource(VOLCANO.pod_groups).create(
        {"metadata": {"name": "job", "namespace": "ns"}, "spec": {}}, namespace="ns"
    )
    client.prepend_reactor("delete", "podgroups", lambda a: (True, new_internal_error("nope")))
    with pytest.raises(RuntimeError, match="unable to delete PodGroup"):
        control.delete_pod_group(JOB)
    assert recorder.events[-1].startswith("Warning FailedDeletePodGroup Error deleting: ")


def test_backend_selection():
    assert backend_for("volcano") is VOLCANO
    assert backend_for("kube-batch") is KUBE_BATCH
    assert backend_for("") is KUBE_BATCH
    custom = backend_for("my-batch")
    assert custom.scheduler_name == "my-batch" and custom.pod_groups == KUBE_BATCH.pod_groups
