"""PodGroup sync/delete for both gang-scheduling backends."""

import pytest

from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.control.podgroup_control import (
    KUBE_BATCH,
    VOLCANO,
    GangPolicy,
    PodGroupControl,
    backend_for,
    volcano_admits,
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
    "backend, api_version, spec",
    [
        (KUBE_BATCH, "scheduling.incubator.k8s.io/v1alpha1", {"minMember": 3}),
        (VOLCANO, "scheduling.volcano.sh/v1beta1", {"minMember": 3, "queue": "default"}),
    ],
)
def test_sync_creates_then_updates_min_member(backend, api_version, spec):
    client, recorder = FakeKubeClient(), FakeRecorder()
    control = PodGroupControl(client, recorder, backend)
    control.sync_pod_group(JOB, GangPolicy(3), OWNER)
    group = client.resource(backend.pod_groups).get("job", "ns")
    assert group["apiVersion"] == api_version
    assert group["kind"] == "PodGroup"
    # kube-batch: v0.5.3's minMember alone; Volcano: v1.9's default queue too
    assert group["spec"] == spec
    assert group["metadata"]["ownerReferences"] == [OWNER]
    client.clear_actions()
    control.sync_pod_group(JOB, GangPolicy(3), OWNER)
    assert [a.verb for a in client.actions] == ["get"]
    control.sync_pod_group(JOB, GangPolicy(5), OWNER)
    assert client.resource(backend.pod_groups).get("job", "ns")["spec"]["minMember"] == 5


POLICY = GangPolicy(
    2, queue="research", priority_class_name="high", min_resources={"cpu": "1", "memory": "1Gi"}
)


@pytest.mark.parametrize(
    "backend, spec",
    [
        (KUBE_BATCH, {"minMember": 2, "queue": "research", "priorityClassName": "high"}),
        (
            VOLCANO,
            {
                "minMember": 2,
                "queue": "research",
                "priorityClassName": "high",
                "minResources": {"cpu": "1", "memory": "1Gi"},
            },
        ),
    ],
)
def test_each_backend_writes_its_fields_of_the_policy(backend, spec):
    client = FakeKubeClient()
    PodGroupControl(client, FakeRecorder(), backend).sync_pod_group(JOB, POLICY, OWNER)
    assert client.resource(backend.pod_groups).get("job", "ns")["spec"] == spec


@pytest.mark.parametrize("backend", [KUBE_BATCH, VOLCANO])
def test_a_changed_policy_patches_the_group_and_keeps_its_queue(backend):
    """v0.5.3 never updated a PodGroup; v1.9 rewrites it but keeps a queue it has."""
    client = FakeKubeClient()
    groups = client.resource(backend.pod_groups)
    groups.create(
        {"metadata": {"name": "job", "namespace": "ns"}, "spec": {"minMember": 2, "queue": "q1"}},
        namespace="ns",
    )
    control = PodGroupControl(client, FakeRecorder(), backend)
    control.sync_pod_group(JOB, POLICY, OWNER)
    spec = groups.get("job", "ns")["spec"]
    assert (spec["queue"], spec["priorityClassName"]) == ("q1", "high")
    # the policy no longer names a priority class: the field goes
    control.sync_pod_group(JOB, GangPolicy(2, min_resources=POLICY.min_resources), OWNER)
    assert "priorityClassName" not in groups.get("job", "ns")["spec"]
    assert groups.get("job", "ns")["spec"]["queue"] == "q1"


def test_min_resources_are_compared_by_value():
    client = FakeKubeClient()
    groups = client.resource(VOLCANO.pod_groups)
    control = PodGroupControl(client, FakeRecorder(), VOLCANO)
    control.sync_pod_group(JOB, GangPolicy(1, min_resources={"cpu": "1000m"}), OWNER)
    client.clear_actions()
    control.sync_pod_group(JOB, GangPolicy(1, min_resources={"cpu": "1"}), OWNER)
    assert [a.verb for a in client.actions] == ["get"]
    control.sync_pod_group(JOB, GangPolicy(1, min_resources={"cpu": "2"}), OWNER)
    assert groups.get("job", "ns")["spec"]["minResources"] == {"cpu": "2"}


@pytest.mark.parametrize(
    "group, admitted",
    [
        (None, False),  # none could be read or created
        ({"status": {}}, False),  # Volcano has not seen it yet
        ({"status": {"phase": "Pending"}}, False),
        ({"status": {"phase": "Inqueue"}}, True),
        ({"status": {"phase": "Running"}}, True),
        ({"status": {"phase": "Unknown"}}, True),
    ],
)
def test_volcano_admits_a_group_past_pending(group, admitted):
    """training-operator v1.9's DelayPodCreationDueToPodGroup, negated."""
    assert volcano_admits(group) is admitted
    assert KUBE_BATCH.admits(group) is True


def test_sync_does_not_create_on_other_errors():
    client = FakeKubeClient()
    client.prepend_reactor("get", "podgroups", lambda a: (True, new_internal_error("down")))
    with pytest.raises(Exception, match="down"):
        PodGroupControl(client, FakeRecorder(), KUBE_BATCH).sync_pod_group(
            JOB, GangPolicy(1), OWNER
        )
    assert not client.filter_actions("create", "podgroups")


def test_delete_pod_group_events():
    client, recorder = FakeKubeClient(), FakeRecorder()
    control = PodGroupControl(client, recorder, VOLCANO)
    control.delete_pod_group(JOB)  # absent: nothing happens
    assert recorder.events == []
    control.sync_pod_group(JOB, GangPolicy(2), OWNER)
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
