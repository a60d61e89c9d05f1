"""The XGBoostJob controller, the facts of training-operator v1.9's XGBoostJob controller
(xgboostjob_controller.go, xgboost.go) and its tests (xgboostjob_controller_test.go): pods and
services with v1.9's environment, ports, labels and owner references; the Master decides;
suspension and resumption; a job managed elsewhere; failures and ExitCode restarts. One sync at
a time over the fake API (:class:`support.jobkinds.JobHarness`)."""

from __future__ import annotations

import pytest

from support.jobkinds import XGBOOSTJOB_CASE, JobHarness
from support.sync_steps import env_of, forget_deleted, pods, resync, services, set_suspend
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9
from tf_operator.controller.v1.xgboost.envvar import PortNotFoundError, pod_env
from tf_operator.k8s.client import PODS

K = XGBOOSTJOB_CASE
NAME = "test-job"
PORT = 9991  # v1.9's example's xgboostjob-port


def v19_job(workers: int = 2, master_policy: str = "Never", **spec) -> dict:
    """v1.9's example job: a Master and workers, the xgboost container's port 9991."""
    job = K.new_job(worker=workers, leader=1, name=NAME, **spec)
    for rtype, replica in job["spec"]["xgbReplicaSpecs"].items():
        replica["restartPolicy"] = master_policy if rtype == "Master" else "Never"
        container = replica["template"]["spec"]["containers"][0]
        container["ports"] = [{"name": "xgboostjob-port", "containerPort": PORT}]
    return job


@pytest.fixture
def harness() -> JobHarness:
    return JobHarness(K)


def test_pods_services_env_and_owners(harness):
    job = harness.add_job(v19_job())
    harness.sync(job)
    names = ["test-job-master-0", "test-job-worker-0", "test-job-worker-1"]
    assert sorted(pods(harness)) == sorted(services(harness)) == names
    master_svc = services(harness)["test-job-master-0"]
    (port,) = master_svc["spec"]["ports"]
    assert (port["name"], port["port"]) == ("xgboostjob-port", PORT)
    assert master_svc["spec"]["clusterIP"] == "None"
    for obj in (*pods(harness).values(), master_svc):
        assert obj["metadata"]["ownerReferences"] == [K.owner_ref(job)]


def test_every_container_gets_v1_9s_environment_in_its_order(harness):
    job = v19_job(workers=2)
    job["spec"]["xgbReplicaSpecs"]["Worker"]["template"]["spec"]["containers"].append(
        {"name": "sidecar", "image": "s", "env": [{"name": "RANK", "value": "mine"}]}
    )
    harness.add_job(job)
    harness.sync(job)
    worker1 = pods(harness)["test-job-worker-1"]
    expected = [
        ("MASTER_PORT", str(PORT)),
        ("MASTER_ADDR", "test-job-master-0"),
        ("WORLD_SIZE", "3"),
        ("RANK", "2"),  # a worker's index plus the one Master
        ("PYTHONUNBUFFERED", "1"),
        ("WORKER_PORT", str(PORT)),
        ("WORKER_ADDRS", "test-job-worker-0,test-job-worker-1"),
    ]
    xgboost, sidecar = worker1["spec"]["containers"]
    assert [(e["name"], e["value"]) for e in xgboost["env"]] == expected
    # the variable the template set is the operator's now, where it stood, defined once
    assert [e["name"] for e in sidecar["env"]].count("RANK") == 1
    assert sidecar["env"][0] == {"name": "RANK", "value": "2"}
    master = env_of(pods(harness)["test-job-master-0"])
    assert (master["RANK"], master["WORLD_SIZE"]) == ("0", "3")


def test_a_lone_master_gets_no_worker_variables(harness):
    job = harness.add_job(K.new_job_with({"Master": 1}, name=NAME))
    harness.sync(job)
    env = env_of(pods(harness)["test-job-master-0"])
    assert env == {
        "MASTER_PORT": "9999",  # v1.9's default port
        "MASTER_ADDR": "test-job-master-0",
        "WORLD_SIZE": "1",
        "RANK": "0",
        "PYTHONUNBUFFERED": "1",
    }


def test_a_master_without_its_port_is_an_error():
    job = K.kind.decode(
        {**K.new_job_with({"Master": 1}, name=NAME), "metadata": {"name": NAME}}, DEFAULTS_V1_9
    )  # not defaulted: the master's container has no xgboostjob-port
    job.spec.xgb_replica_specs["Master"].template["spec"]["containers"][0]["ports"] = []
    with pytest.raises(PortNotFoundError, match="xgboostjob-port"):
        pod_env(job, "master", 0)


def test_labels_and_the_master_role(harness):
    job = harness.add_job(v19_job(workers=1))
    harness.sync(job)
    master = pods(harness)["test-job-master-0"]["metadata"]["labels"]
    worker = pods(harness)["test-job-worker-0"]["metadata"]["labels"]
    assert master["training.kubeflow.org/operator-name"] == "xgboostjob-controller"
    assert master["training.kubeflow.org/job-role"] == "master"
    assert master["xgboost-job-name"] == NAME and master["xgboost-replica-type"] == "master"
    assert "training.kubeflow.org/job-role" not in worker
    assert worker["training.kubeflow.org/replica-index"] == "0"


def test_the_master_decides_success(harness):
    job = harness.add_job(v19_job(workers=2))
    harness.sync(job)
    resync(harness, job, {"test-job-worker-0": "Running"})
    assert harness.conditions(job) == [("Created", "True", "XGBoostJobCreated")]  # not yet
    resync(harness, job, {"test-job-master-0": "Running"})
    assert harness.conditions(job)[-1] == ("Running", "True", "XGBoostJobRunning")
    resync(harness, job, {"test-job-master-0": "Succeeded"})  # the workers still run
    status = harness.status(job)
    assert status["replicaStatuses"]["Master"]["succeeded"] == 1
    assert harness.conditions(job)[-1] == ("Succeeded", "True", "XGBoostJobSucceeded")
    assert "selector" not in status["replicaStatuses"]["Worker"]  # v1.9 writes none for it


def test_a_failed_worker_under_never_fails_the_job(harness):
    job = harness.add_job(v19_job(workers=2))
    harness.sync(job)
    resync(harness, job, {"test-job-master-0": "Running", "test-job-worker-1": "Failed"})
    assert harness.conditions(job)[-1] == ("Failed", "True", "XGBoostJobFailed")


def test_an_exit_code_worker_failure_restarts_it():
    """v1.9's example: the Worker under ExitCode; exit 137 recreates the pod."""
    harness = JobHarness(K)
    job = v19_job(workers=1)
    job["spec"]["xgbReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    job = harness.add_job(job)
    harness.sync(job)
    worker = pods(harness)["test-job-worker-0"]
    worker["status"] = {
        "phase": "Failed",
        "containerStatuses": [
            {"name": "xgboost", "state": {"terminated": {"exitCode": 137}}, "restartCount": 0}
        ],
    }
    harness.client.resource(PODS).update_status(worker)
    resync(harness, job, {"test-job-master-0": "Running"})
    assert "test-job-worker-0" in harness.deleted("pods")
    assert harness.conditions(job)[-1] == ("Restarting", "True", "XGBoostJobRestarting")


def test_a_suspended_job_gets_no_pods_and_says_so(harness):
    job = harness.add_job(v19_job(workers=1, runPolicy={"suspend": True}))
    harness.sync(job)
    assert harness.created("pods") == harness.created("services") == []
    status = harness.status(job)
    assert "startTime" not in status
    assert harness.conditions(job) == [
        ("Created", "True", "XGBoostJobCreated"),
        ("Suspended", "True", "XGBoostJobSuspended"),
    ]


def test_suspending_deletes_the_pods_and_resuming_starts_afresh(harness):
    job = harness.add_job(v19_job(workers=1))
    harness.sync(job)
    resync(harness, job, {"test-job-master-0": "Running", "test-job-worker-0": "Running"})
    started = harness.status(job)["startTime"]
    set_suspend(harness, job, True)
    harness.client.clear_actions()
    harness.sync(job)
    names = ["test-job-master-0", "test-job-worker-0"]
    assert sorted(harness.deleted("pods")) == sorted(harness.deleted("services")) == names
    assert harness.status(job)["startTime"] == started
    assert harness.conditions(job)[-1] == ("Suspended", "True", "XGBoostJobSuspended")
    harness.clock.step(5)
    set_suspend(harness, job, False)
    forget_deleted(harness, job, names)
    harness.sync(job)
    resync(harness, job, {"test-job-master-0": "Running", "test-job-worker-0": "Running"})
    assert harness.status(job)["startTime"] != started
    assert harness.conditions(job) == [
        ("Created", "True", "XGBoostJobCreated"),
        ("Suspended", "False", "XGBoostJobResumed"),
        ("Running", "True", "XGBoostJobRunning"),
    ]


def test_a_job_managed_by_an_external_controller_is_left_alone(harness):
    job = harness.add_job(
        v19_job(workers=1, runPolicy={"managedBy": "kueue.x-k8s.io/multikueue", "suspend": True})
    )
    harness.sync(job)
    assert harness.actions() == []
    set_suspend(harness, job, False)
    harness.sync(job)
    assert harness.actions("create") == [] and harness.status(job).get("startTime") is None


def test_a_job_without_a_master_is_failed_with_the_reason(harness):
    job = harness.add_job(K.new_job_with({"Worker": 2}, name=NAME))
    harness.sync(job)
    (failed,) = [c for c in harness.status(job)["conditions"] if c["type"] == "Failed"]
    assert "spec.xgbReplicaSpecs[Master]: Required value: must be present" in failed["message"]
    assert harness.created("pods") == []
