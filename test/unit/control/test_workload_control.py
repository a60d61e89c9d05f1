"""Kubernetes' own gang scheduling: a job's Workload and PodGroup (scheduling.k8s.io/v1beta1),
their names, shapes, order of creation, resizing and deletion (D180)."""

import pytest

from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.control.podgroup_control import GangPolicy, PodGroupControl
from tf_operator.control.workload_control import (
    KUBERNETES_BACKEND,
    POD_GROUPS,
    WORKLOADS,
    WorkloadControl,
    group_control_for,
    initially_scheduled_message,
    job_pod_group_name,
    pod_group_name,
    template_name,
    workload_name,
)

JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "job", "namespace": "ns", "uid": "u-1"},
}
OWNER = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "name": "job",
    "uid": "u-1",
    "controller": True,
    "blockOwnerDeletion": True,
}
WL = workload_name("job", "u-1")
PG = pod_group_name(WL, "job-pgt-0")


def test_names_follow_the_job_controller_shape_and_stay_valid():
    assert WL.startswith("job-") and workload_name("job", "u-2") != WL
    assert workload_name("job", "u-1") == WL  # stable: the same job gets the same names
    assert template_name("job") == "job-pgt-0"
    assert PG.startswith(f"{WL}-job-pgt-0-")
    assert job_pod_group_name("job", "u-1") == PG
    long = "a" * 63
    assert len(template_name(long)) <= 63
    assert len(workload_name("b" * 300, "u")) <= 253
    name = pod_group_name(workload_name("c" * 250, "u"), template_name(long))
    assert len(name) <= 253


def test_sync_creates_the_workload_then_its_pod_group():
    client, recorder = FakeKubeClient(), FakeRecorder()
    control = WorkloadControl(client, recorder)
    group = control.sync_pod_group(JOB, GangPolicy(3), OWNER)
    creates = [(a.verb, a.resource_plural) for a in client.actions if a.verb == "create"]
    assert creates == [("create", "workloads"), ("create", "podgroups")]
    workload = client.resource(WORKLOADS).get(WL, "ns")
    assert workload["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert workload["metadata"]["ownerReferences"] == [OWNER]
    assert workload["spec"] == {
        "controllerRef": {"apiGroup": "kubeflow.org", "kind": "TFJob", "name": "job"},
        "podGroupTemplates": [{"name": "job-pgt-0", "schedulingPolicy": {"gang": {"minCount": 3}}}],
    }
    assert group["metadata"]["name"] == PG
    assert group["spec"] == {
        "workloadRef": {"workloadName": WL, "templateName": "job-pgt-0"},
        "schedulingPolicy": {"gang": {"minCount": 3}},
    }
    refs = group["metadata"]["ownerReferences"]
    assert refs[0] == OWNER
    assert refs[1]["kind"] == "Workload" and refs[1]["name"] == WL
    assert refs[1]["uid"] == workload["metadata"]["uid"] and "controller" not in refs[1]
    assert recorder.events == [
        f"Normal WorkloadCreated Created Workload {WL}",
        f"Normal PodGroupCreated Created PodGroup {PG}",
    ]


def test_an_unchanged_policy_only_reads_and_a_new_min_count_is_patched_into_both():
    client, recorder = FakeKubeClient(), FakeRecorder()
    control = WorkloadControl(client, recorder)
    control.sync_pod_group(JOB, GangPolicy(3), OWNER)
    client.clear_actions()
    control.sync_pod_group(JOB, GangPolicy(3), OWNER)
    assert {a.verb for a in client.actions} == {"get"}
    control.sync_pod_group(JOB, GangPolicy(2), OWNER)
    workload = client.resource(WORKLOADS).get(WL, "ns")
    group = client.resource(POD_GROUPS).get(PG, "ns")
    assert workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 2
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    assert group["spec"]["workloadRef"]["workloadName"] == WL  # the rest as created


def test_min_count_is_at_least_one():
    client = FakeKubeClient()
    group = WorkloadControl(client, FakeRecorder()).sync_pod_group(JOB, GangPolicy(0), OWNER)
    assert group["spec"]["schedulingPolicy"]["gang"]["minCount"] == 1


def test_a_same_named_group_the_job_does_not_control_is_not_adopted():
    foreign = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": WL, "namespace": "ns", "uid": "x"},
        "spec": {"podGroupTemplates": [{"name": "job-pgt-0", "schedulingPolicy": {"basic": {}}}]},
    }
    client = FakeKubeClient({WORKLOADS: [foreign]})
    with pytest.raises(RuntimeError, match="not controlled by job"):
        WorkloadControl(client, FakeRecorder()).sync_pod_group(JOB, GangPolicy(2), OWNER)
    assert client.filter_actions("create") == []
    assert client.filter_actions("patch") == []


def test_the_replica_templates_common_priority_class_goes_on_both():
    class Spec:
        def __init__(self, pc):
            self.template = {"spec": {"priorityClassName": pc}}

    class TypedJob:
        metadata = JOB["metadata"]

        def __init__(self, *classes):
            self._specs = {str(i): Spec(pc) for i, pc in enumerate(classes)}

        def replica_specs(self):
            return self._specs

        def object_ref(self):
            return JOB

    client = FakeKubeClient()
    group = WorkloadControl(client, FakeRecorder()).sync_pod_group(
        TypedJob("high", "high"), GangPolicy(2), OWNER
    )
    assert group["spec"]["priorityClassName"] == "high"
    template = client.resource(WORKLOADS).get(WL, "ns")["spec"]["podGroupTemplates"][0]
    assert template["priorityClassName"] == "high"
    other = FakeKubeClient()
    group = WorkloadControl(other, FakeRecorder()).sync_pod_group(
        TypedJob("high", "low"), GangPolicy(2), OWNER
    )
    assert "priorityClassName" not in group["spec"]


def test_delete_removes_the_pod_group_then_the_workload():
    client, recorder = FakeKubeClient(), FakeRecorder()
    control = WorkloadControl(client, recorder)
    control.sync_pod_group(JOB, GangPolicy(3), OWNER)
    client.clear_actions()
    control.delete_pod_group(JOB)
    deletes = [a.resource_plural for a in client.actions if a.verb == "delete"]
    assert deletes == ["podgroups", "workloads"]
    client.clear_actions()
    control.delete_pod_group(JOB)  # nothing left: only reads
    assert {a.verb for a in client.actions} == {"get"}


def test_the_unplaceable_reason_is_the_initially_scheduled_condition():
    def group(*conditions):
        return {"status": {"conditions": list(conditions)}}

    unschedulable = {
        "type": "PodGroupInitiallyScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "minCount (4) cannot be satisfied: 2 scheduled, 0 remaining",
    }
    assert initially_scheduled_message(group(unschedulable), []) == unschedulable["message"]
    no_message = {**unschedulable, "reason": "SchedulerError", "message": ""}
    assert initially_scheduled_message(group(no_message), []) == "SchedulerError"
    scheduled = {**unschedulable, "status": "True", "reason": "Scheduled"}
    assert initially_scheduled_message(group(scheduled), []) == ""
    assert initially_scheduled_message(group(), []) == ""
    assert initially_scheduled_message(None, []) == ""


def test_the_backend_is_chosen_by_name_and_leaves_the_other_three_alone():
    client, recorder = FakeKubeClient(), FakeRecorder()
    assert isinstance(group_control_for(client, recorder, "kubernetes"), WorkloadControl)
    for name in ("kube-batch", "volcano", "scheduler-plugins", "my-profile"):
        control = group_control_for(client, recorder, name)
        assert isinstance(control, PodGroupControl)
        assert control.backend.scheduling_group is None
    assert KUBERNETES_BACKEND.scheduler_name == ""
    assert KUBERNETES_BACKEND.admits(None) is False
    assert KUBERNETES_BACKEND.admits({}) is True


def test_a_group_being_deleted_is_neither_used_nor_deleted_again():
    """kube-apiserver keeps a PodGroup while active pods name it (podgroup-protection): right
    after a suspend the old one may still be there. No pod may be made to name it."""
    from tf_operator.control.workload_control import GroupTerminating

    client, recorder = FakeKubeClient(), FakeRecorder()
    control = WorkloadControl(client, recorder)
    control.sync_pod_group(JOB, GangPolicy(2), OWNER)
    groups = client.resource(POD_GROUPS)
    protected = {"metadata": {"finalizers": ["scheduling.k8s.io/podgroup-protection"]}}
    groups.patch(PG, protected, "ns")
    groups.delete(PG, "ns")  # kept, terminating, while the finalizer is there
    assert groups.get(PG, "ns")["metadata"]["deletionTimestamp"]
    client.clear_actions()
    recorder.events.clear()
    with pytest.raises(GroupTerminating, match="is being deleted"):
        control.sync_pod_group(JOB, GangPolicy(2), OWNER)
    assert client.filter_actions("create") == [] and client.filter_actions("patch") == []
    control.delete_pod_group(JOB)
    assert [a.resource_plural for a in client.filter_actions("delete")] == ["workloads"]
    assert recorder.events == [f"Normal SuccessfulDeletePodGroup Deleted Workload: {WL}"]
