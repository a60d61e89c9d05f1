"""The JAXJob controller, the facts of training-operator v1.9's JAXJob controller (envvar.go,
jaxjob_controller.go) and its tests (envvar_test.go, jaxjob_controller_test.go): v1.9's
environment table; pods and services with ports, labels and owner references; every worker
must succeed; suspension and resumption; a job managed elsewhere; failures. One sync at a time
over the fake API (:class:`support.jobkinds.JobHarness`)."""

from __future__ import annotations

import pytest

from support.jobkinds import JAXJOB_CASE, JobHarness
from support.sync_steps import env_of, forget_deleted, pods, resync, services, set_suspend
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9
from tf_operator.controller.v1.jax.envvar import PortNotFoundError, set_cluster_spec

K = JAXJOB_CASE
NAME = "test-jaxjob"


def jaxjob(workers: int = 2, **spec) -> dict:
    """Workers whose jax container names no port: the default, 6666, is added."""
    job = K.new_job_with({"Worker": workers}, name=NAME, **spec)
    job["spec"]["jaxReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0].pop("ports")
    return job


def _port(job: dict, port: int) -> dict:
    container = job["spec"]["jaxReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    container["ports"] = [{"name": "jaxjob-port", "containerPort": port}]
    return job


@pytest.fixture
def harness() -> JobHarness:
    return JobHarness(K)


def _decoded(raw: dict):
    job = K.kind.decode(raw, DEFAULTS_V1_9)
    K.kind.set_defaults(job)
    return job


def test_v1_9s_environment_table():
    """envvar_test.go: one worker, port 6666, index 0; every container of the template."""
    job = _decoded(jaxjob(workers=1))
    template = {"spec": {"containers": [{}, {"name": "other"}]}}
    set_cluster_spec(template, job, "worker", 0)
    expected = [
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "COORDINATOR_PORT", "value": "6666"},
        {"name": "COORDINATOR_ADDRESS", "value": "test-jaxjob-worker-0"},
        {"name": "NUM_PROCESSES", "value": "1"},
        {"name": "PROCESS_ID", "value": "0"},
    ]
    assert [c["env"] for c in template["spec"]["containers"]] == [expected, expected]


def test_a_worker_without_the_port_is_an_error():
    """envvar_test.go's "missing container port": a port of another name is not the
    coordinator's (the job is not defaulted here, so no jaxjob-port was added)."""
    raw = jaxjob(workers=1)
    job = K.kind.decode(raw, DEFAULTS_V1_9)
    job.spec.jax_replica_specs["Worker"].template["spec"]["containers"][0]["ports"] = [
        {"name": "wrong-port", "containerPort": 1}
    ]
    with pytest.raises(PortNotFoundError, match="default container port is not exposed"):
        set_cluster_spec({"spec": {"containers": [{}]}}, job, "worker", 0)


def test_pods_services_env_labels_and_owners(harness):
    job = harness.add_job(_port(jaxjob(workers=3), 7777))
    harness.sync(job)
    names = [f"test-jaxjob-worker-{i}" for i in range(3)]
    assert sorted(pods(harness)) == sorted(services(harness)) == names
    (port,) = services(harness)["test-jaxjob-worker-0"]["spec"]["ports"]
    assert (port["name"], port["port"]) == ("jaxjob-port", 7777)
    for i, name in enumerate(names):
        pod = pods(harness)[name]
        env = env_of(pod)
        assert (env["COORDINATOR_ADDRESS"], env["COORDINATOR_PORT"]) == (
            "test-jaxjob-worker-0",
            "7777",
        )
        assert (env["NUM_PROCESSES"], env["PROCESS_ID"]) == ("3", str(i))
        labels = pod["metadata"]["labels"]
        assert labels["training.kubeflow.org/operator-name"] == "jaxjob-controller"
        assert labels["jax-job-name"] == NAME and labels["jax-replica-index"] == str(i)
        # v1.9's IsMasterRole: index 0
        assert (labels.get("training.kubeflow.org/job-role") == "master") == (i == 0)
        assert pod["metadata"]["ownerReferences"] == [K.owner_ref(job)]
        assert pod["spec"]["restartPolicy"] == "Never"  # v1.9's default for the kind


def test_every_worker_must_succeed(harness):
    job = harness.add_job(jaxjob(workers=2))
    harness.sync(job)
    resync(harness, job, {"test-jaxjob-worker-0": "Running"})
    assert harness.conditions(job)[-1] == ("Running", "True", "JAXJobRunning")
    resync(harness, job, {"test-jaxjob-worker-0": "Succeeded", "test-jaxjob-worker-1": "Running"})
    assert harness.conditions(job)[-1] == ("Running", "True", "JAXJobRunning")
    resync(harness, job, {"test-jaxjob-worker-1": "Succeeded"})
    status = harness.status(job)
    assert harness.conditions(job)[-1] == ("Succeeded", "True", "JAXJobSucceeded")
    assert status["replicaStatuses"]["Worker"]["succeeded"] == 2
    assert status["replicaStatuses"]["Worker"]["selector"] == (
        "training.kubeflow.org/job-name=test-jaxjob,"
        "training.kubeflow.org/operator-name=jaxjob-controller,"
        "training.kubeflow.org/replica-type=worker"
    )


def test_a_failed_worker_under_never_fails_the_job(harness):
    job = harness.add_job(jaxjob(workers=2))
    harness.sync(job)
    resync(harness, job, {"test-jaxjob-worker-0": "Running", "test-jaxjob-worker-1": "Failed"})
    assert harness.conditions(job)[-1] == ("Failed", "True", "JAXJobFailed")


def test_a_suspended_job_gets_no_pods_and_says_so(harness):
    job = harness.add_job(jaxjob(workers=1, runPolicy={"suspend": True}))
    harness.sync(job)
    assert harness.created("pods") == harness.created("services") == []
    assert "startTime" not in harness.status(job)
    assert harness.conditions(job) == [
        ("Created", "True", "JAXJobCreated"),
        ("Suspended", "True", "JAXJobSuspended"),
    ]


def test_suspending_deletes_the_pods_and_resuming_starts_afresh(harness):
    job = harness.add_job(jaxjob(workers=2))
    harness.sync(job)
    names = ["test-jaxjob-worker-0", "test-jaxjob-worker-1"]
    resync(harness, job, dict.fromkeys(names, "Running"))
    started = harness.status(job)["startTime"]
    set_suspend(harness, job, True)
    harness.client.clear_actions()
    harness.sync(job)
    assert sorted(harness.deleted("pods")) == sorted(harness.deleted("services")) == names
    assert harness.conditions(job)[-1] == ("Suspended", "True", "JAXJobSuspended")
    harness.clock.step(5)
    set_suspend(harness, job, False)
    forget_deleted(harness, job, names)
    harness.sync(job)
    resync(harness, job, dict.fromkeys(names, "Running"))
    assert harness.status(job)["startTime"] != started
    assert harness.conditions(job) == [
        ("Created", "True", "JAXJobCreated"),
        ("Suspended", "False", "JAXJobResumed"),
        ("Running", "True", "JAXJobRunning"),
    ]


def test_a_job_managed_by_an_external_controller_is_left_alone(harness):
    job = harness.add_job(
        jaxjob(workers=1, runPolicy={"managedBy": "kueue.x-k8s.io/multikueue", "suspend": True})
    )
    harness.sync(job)
    assert harness.actions() == []


def test_an_invalid_job_is_failed_with_the_reason(harness):
    job = K.new_job_with({"Worker": 1}, name=NAME)
    job["spec"]["jaxReplicaSpecs"]["Master"] = job["spec"]["jaxReplicaSpecs"]["Worker"]
    job = harness.add_job(job)
    harness.sync(job)
    (failed,) = [c for c in harness.status(job)["conditions"] if c["type"] == "Failed"]
    assert 'spec.jaxReplicaSpecs[Master]: Unsupported value: "Master"' in failed["message"]
