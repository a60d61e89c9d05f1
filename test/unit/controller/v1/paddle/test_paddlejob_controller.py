"""The PaddleJob controller, the facts of training-operator v1.9's PaddleJob controller
(envvar.go, paddlepaddle_controller.go) and its tests (paddlepaddle_controller_test.go): the
master endpoint through the downward API, the environment with and without a Master, services,
labels and owner references, who decides success. Suspension, a job managed elsewhere,
restarts, TTL, deadlines, backoff and gang scheduling run for PaddleJob with every kind's
generic tests (``test/unit/common/jobcontroller``). One sync at a time over the fake API."""

from __future__ import annotations

import pytest

from support.jobkinds import PADDLEJOB_CASE, JobHarness
from support.sync_steps import pods, resync, services

K = PADDLEJOB_CASE
NAME = "test-paddle"
EXPECTED_PORT = 8080  # v1.9's test's


def paddlejob(replicas: dict[str, int], port: int | None = EXPECTED_PORT, **spec) -> dict:
    job = K.new_job_with(replicas, name=NAME, **spec)
    for replica in job["spec"]["paddleReplicaSpecs"].values():
        container = replica["template"]["spec"]["containers"][0]
        if port is None:
            container.pop("ports")
        else:
            container["ports"] = [{"name": "master", "containerPort": port, "protocol": "TCP"}]
    return job


@pytest.fixture
def harness() -> JobHarness:
    return JobHarness(K)


def env(pod: dict) -> list[tuple[str, str]]:
    return [
        (e["name"], e.get("value") or e["valueFrom"]["fieldRef"]["fieldPath"])
        for e in pod["spec"]["containers"][0]["env"]
    ]


def test_the_master_gets_its_endpoint_from_its_own_ip_and_decides(harness):
    """paddlepaddle_controller_test.go: a Master and a Worker, port 8080."""
    job = harness.add_job(paddlejob({"Master": 1, "Worker": 1}))
    harness.sync(job)
    master, master_svc = pods(harness)[f"{NAME}-master-0"], services(harness)[f"{NAME}-master-0"]
    assert {"name": "master", "containerPort": EXPECTED_PORT, "protocol": "TCP"} in master["spec"][
        "containers"
    ][0]["ports"]
    assert env(master) == [
        ("PYTHONUNBUFFERED", "1"),
        ("PADDLE_JOB_ID", NAME),
        ("PADDLE_NNODES", "2"),
        ("POD_IP_DUMMY", "status.podIP"),
        ("PADDLE_MASTER", f"$(POD_IP_DUMMY):{EXPECTED_PORT}"),
        ("PADDLE_SERVER_NUM", "1"),
    ]
    assert master_svc["spec"]["ports"][0]["port"] == EXPECTED_PORT
    for obj in (master, master_svc):
        assert obj["metadata"]["ownerReferences"] == [K.owner_ref(job)]
    assert env(pods(harness)[f"{NAME}-worker-0"]) == [
        ("PYTHONUNBUFFERED", "1"),
        ("PADDLE_JOB_ID", NAME),
        ("PADDLE_NNODES", "2"),
        ("PADDLE_MASTER", f"{NAME}-master-0:{EXPECTED_PORT}"),
        ("PADDLE_TRAINER_NUM", "1"),
    ]
    assert master["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"
    resync(harness, job, {f"{NAME}-master-0": "Succeeded"})  # the worker never ran
    assert harness.status(job)["replicaStatuses"]["Master"]["succeeded"] == 1
    assert harness.conditions(job)[-1] == ("Succeeded", "True", "PaddleJobSucceeded")


def test_without_a_master_worker_0_is_the_endpoint_and_every_worker_must_succeed(harness):
    """v1.9's simple-cpu example: two workers, the default port 36543."""
    job = harness.add_job(paddlejob({"Worker": 2}, port=None))
    harness.sync(job)
    worker0, worker1 = pods(harness)[f"{NAME}-worker-0"], pods(harness)[f"{NAME}-worker-1"]
    assert env(worker0)[3:] == [
        ("POD_IP_DUMMY", "status.podIP"),
        ("PADDLE_MASTER", "$(POD_IP_DUMMY):36543"),
    ]
    assert env(worker1)[3:] == [("PADDLE_MASTER", f"{NAME}-worker-0:36543")]
    # no Master, no job-role label (v1.9's IsMasterRole: the Master type only)
    assert "training.kubeflow.org/job-role" not in worker0["metadata"]["labels"]
    resync(harness, job, {f"{NAME}-worker-0": "Succeeded", f"{NAME}-worker-1": "Running"})
    assert harness.conditions(job)[-1] == ("Running", "True", "PaddleJobRunning")
    resync(harness, job, {f"{NAME}-worker-1": "Succeeded"})
    status = harness.status(job)
    assert harness.conditions(job)[-1] == ("Succeeded", "True", "PaddleJobSucceeded")
    assert status["replicaStatuses"]["Worker"]["selector"] == (
        f"training.kubeflow.org/job-name={NAME},"
        "training.kubeflow.org/operator-name=paddlejob-controller,"
        "training.kubeflow.org/replica-type=worker"
    )


def test_a_variable_the_template_sets_is_the_operators_once(harness):
    job = paddlejob({"Worker": 1})
    container = job["spec"]["paddleReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    container["env"] = [{"name": "PADDLE_MASTER", "value": "mine:1"}, {"name": "X", "value": "y"}]
    job = harness.add_job(job)
    harness.sync(job)
    names = [n for n, _ in env(pods(harness)[f"{NAME}-worker-0"])]
    assert names[:2] == ["PADDLE_MASTER", "X"] and names.count("PADDLE_MASTER") == 1
    assert dict(env(pods(harness)[f"{NAME}-worker-0"]))["PADDLE_MASTER"] == (
        f"$(POD_IP_DUMMY):{EXPECTED_PORT}"
    )


def test_a_failed_worker_under_never_fails_the_job(harness):
    job = paddlejob({"Worker": 2})
    job["spec"]["paddleReplicaSpecs"]["Worker"]["restartPolicy"] = "Never"
    job = harness.add_job(job)
    harness.sync(job)
    resync(harness, job, {f"{NAME}-worker-0": "Running", f"{NAME}-worker-1": "Failed"})
    assert harness.conditions(job)[-1] == ("Failed", "True", "PaddleJobFailed")
