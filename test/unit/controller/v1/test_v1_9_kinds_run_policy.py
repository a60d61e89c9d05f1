"""Every run policy and gang backend through the shared core, for the XGBoostJob and JAXJob
kinds (a PaddleJob runs the whole generic reconciler suite, ``test/unit/common/jobcontroller``;
an XGBoostJob cannot, as it always has a Master, nor a JAXJob, which has nothing but workers):
TTL after finishing, the active deadline, the backoff limit over ExitCode recreations, and a
PodGroup per job with kube-batch, Volcano and scheduler-plugins from its schedulingPolicy."""

from __future__ import annotations

import pytest

from support.jobkinds import JAXJOB_CASE, XGBOOSTJOB_CASE, JobHarness, KindCase
from support.sync_steps import resync
from tf_operator.control.podgroup_control import KUBE_BATCH, SCHEDULER_PLUGINS_BACKEND, VOLCANO
from tf_operator.k8s.client import PODS

NAME = "test-tfjob"  # the harness's
# Per kind: a job's replicas (every type the kind has), the pod whose exit decides
SHAPES = {
    "xgboostjob": ({"Master": 1, "Worker": 2}, "master"),
    "jaxjob": ({"Worker": 3}, "worker"),
}
KINDS = [pytest.param(c, id=c.name) for c in (XGBOOSTJOB_CASE, JAXJOB_CASE)]


def job_of(k: KindCase, **spec) -> dict:
    return k.new_job_with(SHAPES[k.name][0], **spec)


@pytest.mark.parametrize("k", KINDS)
def test_a_finished_job_is_deleted_after_its_ttl(k):
    harness = JobHarness(k)
    job = harness.add_job(job_of(k, runPolicy={"ttlSecondsAfterFinished": 10}))
    harness.sync(job)
    names = [p["metadata"]["name"] for p in harness.created("pods")]
    resync(harness, job, dict.fromkeys(names, "Succeeded"))
    assert harness.conditions(job)[-1][:2] == ("Succeeded", "True")
    harness.clock.step(5)
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert harness.deleted(k.resource.plural) == []
    harness.clock.step(6)
    harness.sync(job)
    assert harness.deleted(k.resource.plural) == [NAME]


@pytest.mark.parametrize("k", KINDS)
def test_the_active_deadline_fails_the_job_and_cleans_its_pods(k):
    harness = JobHarness(k)
    job = harness.add_job(
        job_of(k, runPolicy={"activeDeadlineSeconds": 30, "cleanPodPolicy": "All"})
    )
    harness.sync(job)
    names = sorted(p["metadata"]["name"] for p in harness.created("pods"))
    resync(harness, job, dict.fromkeys(names, "Running"))
    harness.client.clear_actions()
    harness.clock.step(31)
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert ("Failed", "True", "DeadlineExceeded") in harness.conditions(job)
    assert sorted(harness.deleted("pods")) == names


@pytest.mark.parametrize("k", KINDS)
def test_the_backoff_limit_counts_exit_code_recreations(k):
    harness = JobHarness(k)
    job = job_of(k, runPolicy={"backoffLimit": 1})
    for replica in job["spec"][k.specs_field].values():
        replica["restartPolicy"] = "ExitCode"
    job = harness.add_job(job)
    harness.sync(job)
    pod_name = f"{NAME}-{SHAPES[k.name][1]}-0"
    pod = harness.client.resource(PODS).get(pod_name, "default")
    pod["status"] = {
        "phase": "Failed",
        "containerStatuses": [{"name": k.container, "state": {"terminated": {"exitCode": 137}}}],
    }
    stored = harness.client.resource(PODS).update_status(pod)
    resync(harness, job)
    assert pod_name in harness.deleted("pods")  # recreated: the one retry is used up
    # the informer reports the deletion; the next pass sees the budget spent
    harness.pod_informer.get_indexer().delete(stored)
    harness.ctr.pods.on_delete(stored)
    harness.client.clear_actions()
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert harness.created("pods") == []
    assert ("Failed", "True", "BackoffLimitExceeded") in harness.conditions(job)


@pytest.mark.parametrize("k", KINDS)
@pytest.mark.parametrize(
    ("scheduler", "backend", "expected"),
    [
        pytest.param(
            "kube-batch",
            KUBE_BATCH,
            {"minMember": 2, "queue": "research", "priorityClassName": "high"},
            id="kube-batch",
        ),
        pytest.param(
            "volcano",
            VOLCANO,
            {
                "minMember": 2,
                "queue": "research",
                "priorityClassName": "high",
                "minResources": {"cpu": "1"},  # the first two pods, 500m each
            },
            id="volcano",
        ),
        pytest.param(
            "scheduler-plugins",
            SCHEDULER_PLUGINS_BACKEND,
            {"minMember": 2, "minResources": {"cpu": "1"}},
            id="scheduler-plugins",
        ),
    ],
)
def test_the_scheduling_policy_makes_the_pod_group(k, scheduler, backend, expected):
    harness = JobHarness(k, gang=True, scheduler=scheduler)
    policy = {"minAvailable": 2, "queue": "research", "priorityClass": "high"}
    job = job_of(k, runPolicy={"schedulingPolicy": policy})
    for replica in job["spec"][k.specs_field].values():
        replica["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "500m"}}
    job = harness.add_job(job)
    harness.sync(job)
    group = harness.client.resource(backend.pod_groups).get(NAME, "default")
    assert group["spec"] == expected
    assert group["metadata"]["ownerReferences"] == [k.owner_ref(job)]


@pytest.mark.parametrize("k", KINDS)
def test_every_pod_joins_the_gang_with_its_replica_type_as_task(k):
    harness = JobHarness(k, gang=True, scheduler="kube-batch")
    job = harness.add_job(job_of(k))
    harness.sync(job)
    group = harness.client.resource(KUBE_BATCH.pod_groups).get(NAME, "default")
    assert group["spec"]["minMember"] == sum(SHAPES[k.name][0].values())
    for pod in harness.created("pods"):
        assert pod["spec"]["schedulerName"] == "kube-batch"
        assert pod["metadata"]["annotations"] == {
            "scheduling.k8s.io/group-name": NAME,
            "volcano.sh/task-spec": pod["metadata"]["name"].split("-")[2],
        }
