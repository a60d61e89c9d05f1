"""Gang scheduling with Kubernetes' own Workload and PodGroup API (``--gang-scheduler-name
kubernetes``), for every kind: the group before any pod, the pods' ``spec.schedulingGroup``
and scheduler, minAvailable, suspend, the end of the job, and what the job is told (D180)."""

import pytest

from tf_operator.common.jobcontroller.podgroup import PodGroupEvents, group_summary
from tf_operator.control.workload_control import (
    KUBERNETES_BACKEND,
    POD_GROUPS,
    WORKLOADS,
    job_pod_group_name,
    workload_name,
)
from tf_operator.k8s.client import PODS, SERVICES, new_internal_error
from tf_operator.k8s.controller.controller_utils import ControllerRefResolver


def _names(job):
    m = job["metadata"]
    return workload_name(m["name"], m["uid"]), job_pod_group_name(m["name"], m["uid"])


def _observe_created(harness):
    """The informers deliver the pods and services the passes created."""
    for resource, informer, owned in (
        (PODS, harness.pod_informer, harness.ctr.pods),
        (SERVICES, harness.service_informer, harness.ctr.services),
    ):
        for obj in harness.client.resource(resource).list(namespace="default")["items"]:
            if informer.get_indexer().get(obj) is None:
                informer.get_indexer().add(obj)
                owned.on_add(obj)


def _harness(make_harness):
    return make_harness(gang=True, scheduler="kubernetes")


def test_the_group_comes_before_any_pod_and_every_pod_names_it(make_harness, k):
    harness = _harness(make_harness)
    job = harness.add_job(k.new_job(2))
    harness.sync(job)
    order = [(verb, plural) for verb, plural, _ in harness.actions("create")]
    assert order[:2] == [("create", "workloads"), ("create", "podgroups")]
    assert ("create", "pods") in order
    wl, pg = _names(job)
    group = harness.client.resource(POD_GROUPS).get(pg, "default")
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    assert group["metadata"]["ownerReferences"][0] == k.owner_ref(job)
    assert harness.client.resource(WORKLOADS).get(wl, "default")["metadata"]["ownerReferences"] == [
        k.owner_ref(job)
    ]
    pods = harness.created("pods")
    assert len(pods) == 2
    for pod in pods:
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": pg}
        assert "schedulerName" not in pod["spec"]  # the default scheduler gang-schedules
        assert "scheduling.k8s.io/group-name" not in (pod["metadata"].get("annotations") or {})


def test_a_scheduler_the_template_names_is_kept_silently(make_harness, k):
    harness = _harness(make_harness)
    job = k.new_job(1)
    for spec in job["spec"][k.specs_field].values():
        spec["template"]["spec"]["schedulerName"] = "my-scheduler"
    job = harness.add_job(job)
    harness.sync(job)
    (pod,) = harness.created("pods")
    assert pod["spec"]["schedulerName"] == "my-scheduler"
    assert not [e for e in harness.recorder.events if "SettedPodTemplateSchedulerName" in e]


def test_min_available_sets_the_min_count_and_a_change_is_patched(make_harness, k):
    harness = _harness(make_harness)
    job = k.new_job(3)
    job["spec"].setdefault("runPolicy", {})["schedulingPolicy"] = {"minAvailable": 2}
    job = harness.add_job(job)
    harness.sync(job)
    _, pg = _names(job)
    groups = harness.client.resource(POD_GROUPS)
    assert groups.get(pg, "default")["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2
    _observe_created(harness)
    changed = harness.stored_job(job)
    changed["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] = 1
    harness.cache_job(harness.client.resource(harness.ctr.kind.resource).update(changed, "default"))
    harness.client.clear_actions()
    harness.sync(job)
    assert groups.get(pg, "default")["spec"]["schedulingPolicy"]["gang"]["minCount"] == 1
    assert [p for _, p, _ in harness.actions("patch")].count("podgroups") == 1
    assert harness.actions("create", "podgroups") == []  # updated, never replaced


def test_no_pod_while_the_group_cannot_be_made(make_harness, k):
    harness = _harness(make_harness)
    harness.client.prepend_reactor("create", "podgroups", lambda a: (True, new_internal_error("x")))
    job = harness.add_job(k.new_job(2))
    harness.sync(job)
    assert harness.created("pods") == [] and harness.created("services") == []
    assert any(
        "could not be read or created; the pods wait for it" in e for e in harness.recorder.events
    )


def test_suspend_deletes_the_group_and_the_workload(make_harness, k):
    harness = _harness(make_harness)
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    _observe_created(harness)
    wl, pg = _names(job)
    suspended = harness.stored_job(job)
    suspended["spec"].setdefault("runPolicy", {})["suspend"] = True
    harness.cache_job(
        harness.client.resource(harness.ctr.kind.resource).update(suspended, "default")
    )
    harness.client.clear_actions()
    harness.sync(job)
    assert harness.deleted("podgroups") == [pg] and harness.deleted("workloads") == [wl]
    assert harness.created("pods") == []  # resume is covered on a cluster (integration)


def _unschedulable(message):
    return {
        "conditions": [
            {
                "type": "PodGroupInitiallyScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastTransitionTime": "2026-01-01T12:00:00Z",
            }
        ]
    }


def test_the_schedulers_reason_is_told_once_per_message(make_harness, k):
    harness = _harness(make_harness)
    job = harness.add_job(k.new_job(2))
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    _observe_created(harness)
    _, pg = _names(job)
    groups = harness.client.resource(POD_GROUPS)
    prefix = f"Warning PodGroupUnschedulable PodGroup default/{pg} is unschedulable: "

    def told():
        return [e.removeprefix(prefix) for e in harness.recorder.events if e.startswith(prefix)]

    message = "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
    for status, expected in [
        (_unschedulable(message), [message]),
        (_unschedulable(message), []),  # unchanged: not again
        ({"conditions": [{**_unschedulable(message)["conditions"][0], "status": "True",
                          "reason": "Scheduled", "message": ""}]}, []),
    ]:  # fmt: skip
        group = groups.get(pg, "default")
        group["status"] = status
        groups.update_status(group, namespace="default")
        harness.recorder.clear()
        harness.sync(job)
        assert told() == expected


def test_a_change_of_the_groups_condition_brings_its_job_back(make_harness, k):
    harness = _harness(make_harness)
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    queue = harness.ctr.work_queue
    while len(queue):
        key, _ = queue.get()
        queue.done(key)
    owners = ControllerRefResolver(k.kind_name, "kubeflow.org", harness.ctr.job_lister)
    events = PodGroupEvents(owners, queue, group_summary(KUBERNETES_BACKEND))
    _, pg = _names(job)
    group = harness.client.resource(POD_GROUPS).get(pg, "default")
    events.on_update(group, group)
    assert len(queue) == 0
    events.on_update(group, {**group, "status": _unschedulable("no room")})
    assert queue.get() == ("default/test-tfjob", False)


@pytest.mark.parametrize("scheduler", ["kube-batch", "volcano", "scheduler-plugins"])
def test_the_other_backends_name_no_scheduling_group(make_harness, k, scheduler):
    harness = make_harness(gang=True, scheduler=scheduler)
    job = harness.add_job(k.new_job(1))
    harness.sync(job)
    for pod in harness.created("pods"):
        assert "schedulingGroup" not in pod["spec"]
    assert harness.actions("create", "workloads") == []
