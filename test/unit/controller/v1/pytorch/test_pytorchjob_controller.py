"""The PyTorchJob controller, the facts of training-operator v1.9's PyTorchJob controller tests
(pytorchjob_controller_test.go, elastic_test.go): pods and the master service with their
environment, ports and owner references; status transitions; suspension; a job managed
elsewhere; restarts and exit codes. One sync at a time over the fake API
(:class:`support.jobkinds.JobHarness`)."""

from __future__ import annotations

import pytest

from support.jobkinds import PYTORCHJOB_CASE, JobHarness
from tf_operator.k8s.client import PODS, SERVICES

K = PYTORCHJOB_CASE
NAME = "test-job"
EXPECTED_PORT = 8080


def env_of(pod: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}


def v19_job(workers: int = 2, **spec) -> dict:
    """v1.9's test job: a Master and workers, their pytorch container's port 8080."""
    job = K.new_job(worker=workers, leader=1, name=NAME, **spec)
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        container = replica["template"]["spec"]["containers"][0]
        container["ports"] = [
            {"name": "pytorchjob-port", "containerPort": EXPECTED_PORT, "protocol": "TCP"}
        ]
    return job


@pytest.fixture
def harness() -> JobHarness:
    return JobHarness(K)


def observe(harness: JobHarness, phases: dict[str, str] | None = None) -> None:
    """The informers deliver what the pass created, the pods in ``phases`` (by name) moved on."""
    for pod in harness.client.resource(PODS).list(namespace="default")["items"]:
        phase = (phases or {}).get(pod["metadata"]["name"])
        if phase is not None:
            pod["status"] = {"phase": phase}
            pod = harness.client.resource(PODS).update_status(pod)
        harness.pod_informer.get_indexer().update(pod)
        harness.ctr.pods.on_add(pod)
    for service in harness.client.resource(SERVICES).list(namespace="default")["items"]:
        harness.service_informer.get_indexer().update(service)
        harness.ctr.services.on_add(service)


def resync(harness: JobHarness, job: dict, phases: dict[str, str] | None = None) -> None:
    observe(harness, phases)
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)


def test_pods_services_env_and_owners(harness):
    job = harness.add_job(v19_job())
    harness.sync(job)
    pods = {p["metadata"]["name"]: p for p in harness.client.resource(PODS).list()["items"]}
    services = {s["metadata"]["name"]: s for s in harness.client.resource(SERVICES).list()["items"]}
    assert (
        sorted(pods)
        == sorted(services)
        == ["test-job-master-0", "test-job-worker-0", "test-job-worker-1"]
    )
    master, master_svc = pods["test-job-master-0"], services["test-job-master-0"]
    assert {"name": "pytorchjob-port", "containerPort": EXPECTED_PORT, "protocol": "TCP"} in (
        master["spec"]["containers"][0]["ports"]
    )
    (port,) = master_svc["spec"]["ports"]
    assert (port["name"], port["port"]) == ("pytorchjob-port", EXPECTED_PORT)
    assert master_svc["spec"]["clusterIP"] == "None"
    env = env_of(master)
    assert env["MASTER_PORT"] == str(master_svc["spec"]["ports"][0]["port"])
    assert env["MASTER_ADDR"] == master_svc["metadata"]["name"]
    assert env["PET_NPROC_PER_NODE"] == "auto"
    for obj in (master, master_svc):
        assert obj["metadata"]["ownerReferences"] == [K.owner_ref(job)]


def test_every_container_gets_v1_9s_environment_in_its_order(harness):
    job = v19_job(workers=2)
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"].append(
        {
            "name": "sidecar",
            "image": "s",
            "env": [{"name": "RANK", "value": "mine"}, {"name": "X", "value": "1"}],
        }
    )
    harness.add_job(job)
    harness.sync(job)
    worker1 = harness.client.resource(PODS).get("test-job-worker-1", "default")
    pytorch, sidecar = worker1["spec"]["containers"]
    expected = [
        ("PYTHONUNBUFFERED", "1"),
        ("MASTER_PORT", "8080"),
        ("PET_MASTER_PORT", "8080"),
        ("MASTER_ADDR", "test-job-master-0"),
        ("PET_MASTER_ADDR", "test-job-master-0"),
        ("WORLD_SIZE", "3"),
        ("RANK", "2"),
        ("PET_NODE_RANK", "2"),
        ("PET_NPROC_PER_NODE", "auto"),
        ("PET_NNODES", "3"),
    ]
    assert [(e["name"], e["value"]) for e in pytorch["env"]] == expected
    # a variable the template set is the operator's now, where it stood, and defined once
    names = [e["name"] for e in sidecar["env"]]
    assert names[:2] == ["RANK", "X"] and names.count("RANK") == 1
    assert env_of({"spec": {"containers": [sidecar]}})["RANK"] == "2"
    master = harness.client.resource(PODS).get("test-job-master-0", "default")
    assert env_of(master)["RANK"] == env_of(master)["PET_NODE_RANK"] == "0"


def test_world_size_counts_processes_when_nproc_per_node_is_a_number(harness):
    job = harness.add_job(v19_job(workers=1, nprocPerNode="4"))
    harness.sync(job)
    env = env_of(harness.client.resource(PODS).get("test-job-worker-0", "default"))
    assert (env["WORLD_SIZE"], env["PET_NPROC_PER_NODE"], env["PET_NNODES"]) == ("8", "4", "2")


def test_labels_and_the_master_role(harness):
    job = harness.add_job(v19_job(workers=1))
    harness.sync(job)
    master = harness.client.resource(PODS).get("test-job-master-0", "default")["metadata"]["labels"]
    worker = harness.client.resource(PODS).get("test-job-worker-0", "default")["metadata"]["labels"]
    assert master["training.kubeflow.org/operator-name"] == "pytorchjob-controller"
    assert master["training.kubeflow.org/job-role"] == master["pytorch-job-role"] == "master"
    assert worker == {
        "group-name": "kubeflow.org",
        "pytorch-job-name": NAME,
        "pytorch-replica-type": "worker",
        "pytorch-replica-index": "0",
        "training.kubeflow.org/operator-name": "pytorchjob-controller",
        "training.kubeflow.org/job-name": NAME,
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "0",
        "training.kubeflow.org/job-uid": job["metadata"]["uid"],  # D154
    }


def test_without_a_master_worker_0_has_the_role_and_no_master_variables(harness):
    job = harness.add_job(K.new_job(worker=2, name=NAME))
    harness.sync(job)
    worker0 = harness.client.resource(PODS).get("test-job-worker-0", "default")
    assert worker0["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"
    assert env_of(worker0) == {
        "PYTHONUNBUFFERED": "1",
        "PET_NPROC_PER_NODE": "auto",
        "PET_NNODES": "2",
    }


def test_elastic_policy_environment():
    """elastic_test.go's table, and the defaults' rendezvous endpoint."""
    harness = JobHarness(K)
    elastic = {
        "minReplicas": 1,
        "maxReplicas": 3,
        "rdzvBackend": "c10d",
        "rdzvPort": 1234,
        "rdzvHost": "localhost",
        "rdzvId": "rdzv-id",
        "rdzvConf": [
            {"key": "rdzv-conf-name", "value": "rdzv-conf-value"},
            {"key": "rdzv-conf-name-1", "value": "rdzv-conf-value-1"},
        ],
        "maxRestarts": 3,
    }
    job = harness.add_job(K.new_job(worker=1, name=NAME, elasticPolicy=elastic))
    harness.sync(job)
    env = env_of(harness.client.resource(PODS).get("test-job-worker-0", "default"))
    assert {
        k: env[k]
        for k in env
        if k.startswith("PET_RDZV") or k in ("PET_NNODES", "PET_MAX_RESTARTS")
    } == {
        "PET_MAX_RESTARTS": "3",
        "PET_RDZV_BACKEND": "c10d",
        "PET_RDZV_ENDPOINT": "localhost:1234",
        "PET_RDZV_ID": "rdzv-id",
        "PET_RDZV_CONF": "rdzv-conf-name=rdzv-conf-value,rdzv-conf-name-1=rdzv-conf-value-1",
        "PET_NNODES": "1:3",
    }
    harness = JobHarness(K)
    job = harness.add_job(K.new_job(worker=2, name=NAME, elasticPolicy={}))
    harness.sync(job)
    env = env_of(harness.client.resource(PODS).get("test-job-worker-1", "default"))
    assert (env["PET_RDZV_ENDPOINT"], env["PET_RDZV_BACKEND"], env["PET_NNODES"]) == (
        "test-job-worker-0:23456",
        "c10d",
        "2:2",
    )


def test_the_master_decides_success(harness):
    job = harness.add_job(v19_job(workers=2))
    harness.sync(job)
    resync(harness, job, {"test-job-master-0": "Running", "test-job-worker-0": "Running"})
    assert harness.conditions(job) == [
        ("Created", "True", "PyTorchJobCreated"),
        ("Running", "True", "PyTorchJobRunning"),
    ]
    messages = [c["message"] for c in harness.status(job)["conditions"]]
    assert messages == [f"PyTorchJob {NAME} is created.", f"PyTorchJob {NAME} is running."]
    resync(harness, job, {"test-job-master-0": "Succeeded"})  # the workers still run
    status = harness.status(job)
    assert status["replicaStatuses"]["Master"]["succeeded"] == 1
    assert harness.conditions(job)[-1] == ("Succeeded", "True", "PyTorchJobSucceeded")
    assert status["replicaStatuses"]["Worker"]["selector"] == (
        "training.kubeflow.org/job-name=test-job,"
        "training.kubeflow.org/operator-name=pytorchjob-controller,"
        "training.kubeflow.org/replica-type=worker"
    )


def test_without_a_master_every_worker_must_succeed(harness):
    job = harness.add_job(K.new_job(worker=2, name=NAME))
    harness.sync(job)
    resync(harness, job, {"test-job-worker-0": "Succeeded", "test-job-worker-1": "Running"})
    assert harness.conditions(job)[-1] == ("Running", "True", "PyTorchJobRunning")
    resync(harness, job, {"test-job-worker-1": "Succeeded"})
    assert harness.conditions(job)[-1] == ("Succeeded", "True", "PyTorchJobSucceeded")


def test_an_elastic_job_succeeds_once_any_worker_did(harness):
    job = harness.add_job(K.new_job(worker=3, name=NAME, elasticPolicy={"minReplicas": 1}))
    harness.sync(job)
    resync(harness, job, {"test-job-worker-1": "Succeeded", "test-job-worker-0": "Running"})
    assert harness.conditions(job)[-1] == ("Succeeded", "True", "PyTorchJobSucceeded")


def test_a_suspended_job_gets_no_pods_and_says_so(harness):
    job = harness.add_job(v19_job(workers=1, runPolicy={"suspend": True}))
    harness.sync(job)
    assert harness.created("pods") == harness.created("services") == []
    status = harness.status(job)
    assert "startTime" not in status
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("Created", "True", "PyTorchJobCreated", f"PyTorchJob {NAME} is created."),
        ("Suspended", "True", "PyTorchJobSuspended", f"PyTorchJob {NAME} is suspended."),
    ]


def test_suspending_a_running_job_deletes_its_pods_and_resuming_starts_afresh(harness):
    job = harness.add_job(v19_job(workers=1))
    harness.sync(job)
    resync(harness, job, {"test-job-master-0": "Running", "test-job-worker-0": "Running"})
    started = harness.status(job)["startTime"]
    stored = harness.stored_job(job)
    stored["spec"]["runPolicy"] = {"suspend": True}
    stored = harness.client.resource(K.resource).update(stored, namespace="default")
    harness.cache_job(stored)
    harness.client.clear_actions()
    harness.sync(job)
    assert (
        sorted(harness.deleted("pods"))
        == sorted(harness.deleted("services"))
        == [
            "test-job-master-0",
            "test-job-worker-0",
        ]
    )
    status = harness.status(job)
    assert status["replicaStatuses"]["Master"].get("active", 0) == 0
    assert status["startTime"] == started
    assert harness.conditions(job) == [
        ("Created", "True", "PyTorchJobCreated"),
        ("Running", "False", "PyTorchJobSuspended"),
        ("Suspended", "True", "PyTorchJobSuspended"),
    ]
    harness.clock.step(5)
    stored = harness.stored_job(job)
    stored["spec"]["runPolicy"] = {"suspend": False}
    harness.cache_job(harness.client.resource(K.resource).update(stored, namespace="default"))
    for name in ("test-job-master-0", "test-job-worker-0"):
        for informer in (harness.pod_informer, harness.service_informer):
            cached = informer.get_indexer().get_by_key(f"default/{name}")
            if cached is not None:
                informer.get_indexer().delete(cached)
    harness.ctr.expectations.delete_expectations_with_prefix(f"default/{NAME}/")
    harness.sync(job)
    resync(harness, job, {"test-job-master-0": "Running", "test-job-worker-0": "Running"})
    status = harness.status(job)
    assert status["startTime"] != started
    assert harness.conditions(job) == [
        ("Created", "True", "PyTorchJobCreated"),
        ("Suspended", "False", "PyTorchJobResumed"),
        ("Running", "True", "PyTorchJobRunning"),
    ]


def test_a_job_managed_by_multikueue_is_left_alone(harness):
    job = harness.add_job(
        v19_job(workers=1, runPolicy={"managedBy": "kueue.x-k8s.io/multikueue", "suspend": True})
    )
    harness.sync(job)
    assert harness.actions() == []
    assert harness.status(job).get("conditions") is None


@pytest.mark.parametrize(
    ("exit_code", "restarted"),
    [(137, True), (139, True), (130, True), (1, False), (127, False)],
)
def test_exit_code_restarts_follow_v1_9s_rule(exit_code, restarted):
    """restartPolicy ExitCode: a code >= 128 recreates the pod (v1.9's defaults, which a
    PyTorchJob gets), another fails the job."""
    harness = JobHarness(K)
    job = K.new_job(worker=2, leader=1, name=NAME)
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    job = harness.add_job(job)
    harness.add_pods(job, "master", active=1)
    harness.add_pods(job, "worker", active=1)
    failed = K.new_pod(job, "worker", 1, "Failed")
    failed["status"]["containerStatuses"] = [
        {"name": "pytorch", "state": {"terminated": {"exitCode": exit_code}}}
    ]
    harness.add_pod(failed)
    harness.add_services(job, "master", 1)
    harness.add_services(job, "worker", 2)
    harness.sync(job)
    last = harness.conditions(job)[-1]
    if restarted:
        assert harness.deleted("pods") == ["test-job-worker-1"]
        assert last == ("Restarting", "True", "PyTorchJobRestarting")
        assert harness.status(job)["exitCodeRestarts"]["count"] == 1
    else:
        assert last == ("Failed", "True", "PyTorchJobFailed")
        assert (
            f"Normal PyTorchJobFailed PyTorchJob {NAME} has failed because 1 Worker replica(s) failed."
            in (harness.recorder.events)
        )
    assert f"Normal ExitedWithCode Pod: default.test-job-worker-1 exited with code {exit_code}" in (
        harness.recorder.events
    )


def test_a_failed_master_under_never_fails_the_job(harness):
    job = K.new_job(worker=1, leader=1, name=NAME)
    job["spec"]["pytorchReplicaSpecs"]["Master"]["restartPolicy"] = "Never"
    job = harness.add_job(job)
    harness.add_pods(job, "master", failed=1)
    harness.add_pods(job, "worker", active=1)
    harness.sync(job)
    assert harness.conditions(job)[-1] == ("Failed", "True", "PyTorchJobFailed")


def test_a_finished_job_keeps_its_pods_by_v1_9s_default_clean_pod_policy(harness):
    job = harness.add_job(v19_job(workers=1))
    harness.sync(job)
    resync(harness, job, {"test-job-master-0": "Succeeded", "test-job-worker-0": "Running"})
    harness.client.clear_actions()
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert harness.deleted("pods") == []  # cleanPodPolicy None, v1.9's default


def test_an_invalid_job_is_failed_with_the_reason(harness):
    job = harness.add_job(K.new_job(worker=1, name=NAME, pytorchReplicaSpecs={"Chief": {}}))
    harness.sync(job)
    (condition,) = harness.status(job)["conditions"]
    assert (condition["type"], condition["reason"]) == ("Failed", "InvalidPyTorchJobSpec")
    assert 'spec.pytorchReplicaSpecs[Chief]: Unsupported value: "Chief"' in condition["message"]


def test_gang_scheduling_gives_the_job_a_pod_group_with_a_task_per_replica_type():
    harness = JobHarness(K, gang=True, scheduler="volcano")
    job = harness.add_job(v19_job(workers=3))
    harness.sync(job)
    (group,) = harness.created("podgroups")
    assert group["spec"]["minMember"] == 4
    harness.sync(job)  # Volcano has not admitted the group: no pod yet
    assert harness.created("pods") == []
