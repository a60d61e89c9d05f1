"""A job's PodGroup as users see it, for the four gang APIs the operator writes."""

import pytest

from tf_operator.sdk.podgroup import PodGroupInfo, find_pod_group, pod_group_info

JOB = {"metadata": {"name": "j", "namespace": "ns", "uid": "u"}}
OWNED = {"ownerReferences": [{"controller": True, "uid": "u", "kind": "TFJob", "name": "j"}]}


def k8s_group(condition=None, name="j-abc-j-pgt-0-xyz", meta=OWNED):
    status = {"conditions": [condition]} if condition else {}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "metadata": {"name": name, **meta},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
        "status": status,
    }


@pytest.mark.parametrize(
    ("condition", "state", "message"),
    [
        (None, "Pending", ""),
        ({"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled"}, "Scheduled", ""),
        (
            {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
             "message": "minCount (3) cannot be satisfied: 1 scheduled, 0 remaining"},
            "Unschedulable",
            "minCount (3) cannot be satisfied: 1 scheduled, 0 remaining",
        ),
    ],
)  # fmt: skip
def test_kubernetes_groups_are_read_from_the_schedulers_condition(condition, state, message):
    info = pod_group_info(k8s_group(condition))
    assert info == PodGroupInfo("j-abc-j-pgt-0-xyz", "scheduling.k8s.io/v1beta1", 3, state, message)
    shown = str(info)
    assert shown.startswith("j-abc-j-pgt-0-xyz (scheduling.k8s.io/v1beta1, min 3) " + state)
    assert shown.endswith(f": {message}") if message else ":" not in shown


def test_the_other_apis_are_read_from_phase_and_unschedulable_condition():
    volcano = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "metadata": {"name": "j"},
        "spec": {"minMember": 2},
        "status": {
            "phase": "Inqueue",
            "conditions": [{"type": "Unschedulable", "status": "True", "message": "no room"}],
        },
    }
    assert pod_group_info(volcano) == PodGroupInfo(
        "j", "scheduling.volcano.sh/v1beta1", 2, "Inqueue", "no room"
    )
    plugins = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "metadata": {"name": "j"}, "spec": {}}
    assert pod_group_info(plugins).state == "Pending"
    assert pod_group_info(plugins).min_member is None


def test_find_takes_only_a_group_the_job_controls():
    foreign = k8s_group(name="other", meta={"ownerReferences": [{"controller": True, "uid": "x"}]})
    ours = k8s_group()
    named = {"apiVersion": "scheduling.volcano.sh/v1beta1", "metadata": {"name": "j", **OWNED}}
    asked = []

    def get(resource, ns, name):
        asked.append((resource.group, ns, name))
        return named if resource.group == "scheduling.volcano.sh" else None

    assert find_pod_group(JOB, lambda r, ns: [foreign, ours], get) == {**ours, "kind": "PodGroup"}
    assert asked == []  # the Kubernetes group found first: no other API read
    assert find_pod_group(JOB, lambda r, ns: [foreign], get) == {**named, "kind": "PodGroup"}
    # kube-apiserver's list items carry no apiVersion: the API they were listed from says it
    bare = {k: v for k, v in ours.items() if k != "apiVersion"}
    found = find_pod_group(JOB, lambda r, ns: [bare], get)
    assert found is not None and pod_group_info(found).state == "Pending"
    assert found["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert ("scheduling.x-k8s.io", "ns", "j") in asked
    assert find_pod_group(JOB, lambda r, ns: [], lambda r, ns, n: None) is None
