"""PodGroup sync/delete for the gang-scheduling backends (kube-batch, Volcano,
scheduler-plugins)."""

import pytest

from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.control.podgroup_control import (
    KUBE_BATCH,
    SCHEDULER_PLUGINS_BACKEND,
    VOLCANO,
    GangPolicy,
    PodGroupControl,
    PodMarks,
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
        (SCHEDULER_PLUGINS_BACKEND, "scheduling.x-k8s.io/v1alpha1", {"minMember": 3}),
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
    2,
    queue="research",
    priority_class_name="high",
    min_resources={"cpu": "1", "memory": "1Gi"},
    schedule_timeout_seconds=30,
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
        # training-operator v1.9's scheduler-plugins spec: no queue, no priority class
        (
            SCHEDULER_PLUGINS_BACKEND,
            {
                "minMember": 2,
                "minResources": {"cpu": "1", "memory": "1Gi"},
                "scheduleTimeoutSeconds": 30,
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


def test_a_changed_timeout_patches_a_scheduler_plugins_group_and_an_unset_one_goes():
    client = FakeKubeClient()
    groups = client.resource(SCHEDULER_PLUGINS_BACKEND.pod_groups)
    control = PodGroupControl(client, FakeRecorder(), SCHEDULER_PLUGINS_BACKEND)
    control.sync_pod_group(JOB, POLICY, OWNER)
    control.sync_pod_group(JOB, GangPolicy(3, schedule_timeout_seconds=5), OWNER)
    assert groups.get("job", "ns")["spec"] == {"minMember": 3, "scheduleTimeoutSeconds": 5}
    control.sync_pod_group(JOB, GangPolicy(3), OWNER)
    assert groups.get("job", "ns")["spec"] == {"minMember": 3}


def test_volcano_writes_min_task_member_when_asked_and_drops_it_when_not():
    """D77: per-task minimums go to Volcano's minTaskMember; a job that stops asking (a client
    that dropped the field) leaves a group with minMember alone."""
    client = FakeKubeClient()
    groups = client.resource(VOLCANO.pod_groups)
    control = PodGroupControl(client, FakeRecorder(), VOLCANO)
    control.sync_pod_group(JOB, GangPolicy(3, min_task_member={"ps": 1, "worker": 2}), OWNER)
    assert groups.get("job", "ns")["spec"]["minTaskMember"] == {"ps": 1, "worker": 2}
    control.sync_pod_group(JOB, GangPolicy(3), OWNER)
    assert "minTaskMember" not in groups.get("job", "ns")["spec"]
    for backend in (KUBE_BATCH, SCHEDULER_PLUGINS_BACKEND):  # no such field there
        assert "minTaskMember" not in backend.spec_for(
            GangPolicy(3, min_task_member={"w": 1}), None
        )


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
    """As training-operator v1.9: volcano, else scheduler-plugins under the name given; our
    default kube-batch stays v0.5.3's, and scheduler-plugins gets its chart's name (D75)."""
    assert backend_for("volcano") is VOLCANO
    assert backend_for("kube-batch") is KUBE_BATCH
    assert backend_for("") is KUBE_BATCH
    assert backend_for("scheduler-plugins") is SCHEDULER_PLUGINS_BACKEND
    assert SCHEDULER_PLUGINS_BACKEND.scheduler_name == "scheduler-plugins-scheduler"
    custom = backend_for("my-coscheduler")
    assert custom.scheduler_name == "my-coscheduler"
    assert custom.pod_groups == SCHEDULER_PLUGINS_BACKEND.pod_groups
    assert custom.spec_for is SCHEDULER_PLUGINS_BACKEND.spec_for


def test_how_each_backend_marks_a_pod():
    assert (
        KUBE_BATCH.marks("job", "worker")
        == VOLCANO.marks("job", "worker")
        == PodMarks(
            annotations={"scheduling.k8s.io/group-name": "job", "volcano.sh/task-spec": "worker"}
        )
    )
    assert SCHEDULER_PLUGINS_BACKEND.marks("job", "worker") == PodMarks(
        labels={"scheduling.x-k8s.io/pod-group": "job"}
    )


def unscheduled(name: str, message: str) -> dict:
    condition = {"type": "PodScheduled", "status": "False", "message": message}
    return {"metadata": {"name": name}, "status": {"phase": "Pending", "conditions": [condition]}}


FIT = "0/2 nodes are available: 2 Insufficient cpu. PodGroup ns/job gets rejected due to Pod job-worker-1 is unschedulable even after PostFilter."
ECHO = "0/1 nodes are available: 1 optimistic rejection in PostFilter."
UNRESERVE = "0/1 nodes are available: 1 rejection in Unreserve."
TIMEOUT = (
    "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Coscheduling."
)


@pytest.mark.parametrize(
    "phase, pods, told",
    [
        ("Scheduling", [unscheduled("job-ps-0", ECHO), unscheduled("job-worker-1", FIT)], FIT),
        (
            "Scheduling",
            [unscheduled("job-worker-1", UNRESERVE), unscheduled("job-worker-0", TIMEOUT)],
            TIMEOUT,
        ),
        ("Pending", [unscheduled("job-b", UNRESERVE), unscheduled("job-a", UNRESERVE)], UNRESERVE),
        (
            "Scheduling",
            [{"metadata": {"name": "job-worker-0"}, "status": {"phase": "Pending"}}],
            "",
        ),
        ("Running", [unscheduled("job-worker-1", FIT)], ""),  # placed: a stale reason is not told
        ("Finished", [unscheduled("job-worker-1", FIT)], ""),
    ],
)
def test_scheduler_plugins_tells_the_root_cause_its_pods_give(phase, pods, told):
    """D76: scheduler-plugins writes no condition on a group; the pods' reason is told, the
    echoes of a sibling's rejection only when nothing else is known."""
    group = {"metadata": {"name": "job"}, "status": {"phase": phase}}
    assert SCHEDULER_PLUGINS_BACKEND.unschedulable(group, pods) == told
    assert SCHEDULER_PLUGINS_BACKEND.unschedulable(None, pods) == ""
    # kube-batch and Volcano read their group's condition, not the pods
    assert VOLCANO.unschedulable(group, pods) == ""
