"""Lifecycle policies of XGBoostJobs, JAXJobs and PaddleJobs on the simulated kubelet, on both
control planes (docs/policies.md, D110): a completion rule ends an XGBoostJob while its Master
still runs, an exit-code FailJob rule fails a JAXJob at once where its restart policy would have
recreated the pod, and an evicted PaddleJob worker is recreated without spending a
``backoffLimit`` of 0. The status fields the operator writes (the policy in force, the restarts
by cause) reach the stored job: a CRD lacking them would prune the write."""

from __future__ import annotations

from typing import Any

import pytest

from support.crd import (
    JAX_CRD_FILE,
    PADDLE_CRD_FILE,
    PYTORCH_CRD_FILE,
    XGBOOST_CRD_FILE,
    install_crds,
)

pytestmark = pytest.mark.integration

RUN = "localcluster.tf-operator.io/run-seconds"
EXIT = "localcluster.tf-operator.io/exit-code"
PODS = ("", "v1", "pods")
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
SCHEMES = (
    "--enable-scheme=xgboostjob",
    "--enable-scheme=jaxjob",
    "--enable-scheme=paddlejob",
    "--enable-scheme=pytorchjob",
)
# kind -> (plural, replica specs field, container)
KINDS = {
    "XGBoostJob": ("xgboostjobs", "xgbReplicaSpecs", "xgboost"),
    "JAXJob": ("jaxjobs", "jaxReplicaSpecs", "jax"),
    "PaddleJob": ("paddlejobs", "paddleReplicaSpecs", "paddle"),
    "PyTorchJob": ("pytorchjobs", "pytorchReplicaSpecs", "pytorch"),
}


@pytest.fixture(scope="module")
def cluster(sim):
    install_crds(sim.client, XGBOOST_CRD_FILE, JAX_CRD_FILE, PADDLE_CRD_FILE, PYTORCH_CRD_FILE)
    return sim


@pytest.fixture(scope="module")
def op(cluster, module_operator):
    operator = module_operator(cluster, *SCHEMES, "--threadiness=2")
    cluster.wait_for(operator.is_leader, 30, "leadership")
    return operator


def resource(kind: str) -> tuple[str, str, str]:
    return ("kubeflow.org", "v1", KINDS[kind][0])


def job(kind: str, name: str, replicas: dict[str, dict], **spec: Any) -> dict:
    """A job of ``kind``: ``replicas`` maps a replica type to ``replicas``, ``annotations`` (the
    simulated kubelet's run time and exit code) and ``restartPolicy``."""
    _, field, container = KINDS[kind]
    specs = {}
    for rtype, opts in replicas.items():
        template: dict = {
            "metadata": {"annotations": opts.get("annotations", {})},
            "spec": {"containers": [{"name": container, "image": "localcluster/none"}]},
        }
        specs[rtype] = {"replicas": opts.get("replicas", 1), "template": template}
        if "restartPolicy" in opts:
            specs[rtype]["restartPolicy"] = opts["restartPolicy"]
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {**spec, field: specs},
    }


def get(cluster, kind: str, name: str) -> dict:
    return cluster.client.get(resource(kind), "default", name)


def condition(cluster, kind: str, name: str, ctype: str) -> dict | None:
    for cond in (get(cluster, kind, name).get("status") or {}).get("conditions") or []:
        if cond["type"] == ctype and cond["status"] == "True":
            return cond
    return None


def wait_condition(cluster, kind: str, name: str, ctype: str, timeout: float) -> dict:
    return cluster.wait_for(
        lambda: condition(cluster, kind, name, ctype), timeout, f"{kind} {name} {ctype}"
    )


def live_pods(cluster, name: str) -> dict[str, str]:
    items = cluster.client.list(PODS, "default", label_selector=f"{JOB_NAME_LABEL}={name}").items
    return {
        p["metadata"]["name"].removeprefix(f"{name}-"): p["status"].get("phase", "")
        for p in items
        if not p["metadata"].get("deletionTimestamp")
    }


def uids(cluster, name: str) -> dict[str, str]:
    items = cluster.client.list(PODS, "default", label_selector=f"{JOB_NAME_LABEL}={name}").items
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in items}


def test_an_xgboostjob_ends_when_its_workers_do_while_the_master_still_runs(cluster, op):
    name = "lc-xgb-workers"
    body = job(
        "XGBoostJob",
        name,
        {
            "Master": {"annotations": {RUN: "600"}},  # v1.9's rule would wait for it
            "Worker": {"replicas": 2, "annotations": {RUN: "0.5"}},
        },
        runPolicy={"cleanPodPolicy": "None"},  # the master would run on without the rule
        lifecyclePolicy={"success": {"rule": "AllWorkers"}},
    )
    cluster.client.create(resource("XGBoostJob"), "default", body)
    wait_condition(cluster, "XGBoostJob", name, "Succeeded", 60)
    # the master was stopped; the workers' finished pods stay (cleanPodPolicy None)
    cluster.wait_for(
        lambda: live_pods(cluster, name) == {"worker-0": "Succeeded", "worker-1": "Succeeded"},
        30,
        "the master stopped",
    )
    status = get(cluster, "XGBoostJob", name)["status"]
    assert status["lifecyclePolicy"] == {"success": {"rule": "AllWorkers"}}


def test_a_jaxjob_exit_code_failjob_rule_fails_it_at_once(cluster, op):
    name = "lc-jax-failjob"
    rule = {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [137]}}
    body = job(
        "JAXJob",
        name,
        # 137 is retryable under restartPolicy ExitCode: without the rule the pods would be
        # recreated, up to backoffLimit
        {
            "Worker": {
                "replicas": 2,
                "restartPolicy": "ExitCode",
                "annotations": {RUN: "0.5", EXIT: "137"},
            }
        },
        runPolicy={"backoffLimit": 5},
        lifecyclePolicy={"failure": {"rules": [rule]}},
    )
    cluster.client.create(resource("JAXJob"), "default", body)
    failed = wait_condition(cluster, "JAXJob", name, "Failed", 60)
    assert failed["reason"] == "PodFailurePolicy"
    assert f"{name}-worker-" in failed["message"]
    assert "lifecyclePolicy.failure.rules[0] says FailJob" in failed["message"]
    status = get(cluster, "JAXJob", name)["status"]
    assert (status.get("exitCodeRestarts") or {}).get("count", 0) == 0  # nothing recreated
    assert status["lifecyclePolicy"] == {"failure": {"rules": [rule]}}


def test_an_evicted_paddlejob_worker_is_recreated_without_spending_the_budget(cluster, op):
    name = "lc-paddle-evict"
    body = job(
        "PaddleJob",
        name,
        {
            "Master": {"annotations": {RUN: "5"}},
            "Worker": {"replicas": 2, "annotations": {RUN: "5"}},
        },
        runPolicy={"backoffLimit": 0},  # any counted restart would fail the job
        lifecyclePolicy={"failure": {}},
    )
    cluster.client.create(resource("PaddleJob"), "default", body)
    target = f"{name}-worker-1"
    cluster.wait_for(
        lambda: live_pods(cluster, name).get("worker-1") == "Running", 30, "worker-1 runs"
    )
    first = uids(cluster, name)[target]
    # what a kubelet's node-pressure eviction leaves (the local kubelets do not evict)
    pod = cluster.client.get(PODS, "default", target)
    pod["status"]["phase"] = "Failed"
    pod["status"]["reason"] = "Evicted"
    pod["status"]["conditions"] = [
        *(pod["status"].get("conditions") or []),
        {"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet"},
    ]
    cluster.client.update(PODS, "default", target, pod, subresource="status")
    cluster.wait_for(
        lambda: uids(cluster, name).get(target) not in (None, first), 30, "worker-1 recreated"
    )
    wait_condition(cluster, "PaddleJob", name, "Succeeded", 60)
    status = get(cluster, "PaddleJob", name)["status"]
    assert status["restartsByCause"] == {"Disruption": 1}
    assert status["exitCodeRestarts"]["count"] == 0
    assert condition(cluster, "PaddleJob", name, "Failed") is None


def test_an_xgboostjob_spends_its_durable_budget_on_failure_rule_restarts(cluster, op):
    name = "lc-xgb-budget"
    rule = {"action": "RestartReplica", "onExitCodes": {"operator": "NotIn", "values": [0]}}
    body = job(
        "XGBoostJob",
        name,
        {
            "Master": {"annotations": {RUN: "600"}},
            "Worker": {"restartPolicy": "Never", "annotations": {RUN: "0.5", EXIT: "3"}},
        },
        runPolicy={"backoffLimit": 2},
        lifecyclePolicy={"failure": {"rules": [rule], "replicaTypeLimits": {"Worker": 5}}},
    )
    cluster.client.create(resource("XGBoostJob"), "default", body)
    failed = wait_condition(cluster, "XGBoostJob", name, "Failed", 60)
    assert failed["reason"] == "BackoffLimitExceeded"
    status = get(cluster, "XGBoostJob", name)["status"]
    assert status["exitCodeRestarts"]["count"] == 2
    assert status["restartsByCause"] == {"FailureRule": 2}
    assert status["restartsByReplicaType"] == {"Worker": 2}


def test_a_jaxjob_worker_that_cannot_be_placed_is_told_then_fails_it_at_the_deadline(cluster, op):
    name = "lc-jax-startup"
    body = job(
        "JAXJob",
        name,
        {"Worker": {"replicas": 2}},
        lifecyclePolicy={"startup": {"deadlineSeconds": 4}},
    )
    huge = {"requests": {"cpu": "100000"}}  # no node has it
    for spec in body["spec"]["jaxReplicaSpecs"].values():
        spec["template"]["spec"]["containers"][0]["resources"] = huge
    cluster.client.create(resource("JAXJob"), "default", body)

    def told() -> bool:
        created = condition(cluster, "JAXJob", name, "Created")
        return (
            created is not None
            and f"Blocked: pod {name}-worker-0: Unschedulable" in (created["message"])
        )

    cluster.wait_for(told, 20, "the blocking reason on the Created condition")
    failed = wait_condition(cluster, "JAXJob", name, "Failed", 30)
    assert failed["reason"] == "StartupDeadlineExceeded"
    assert f"did not start within 4s: pod {name}-worker-0: Unschedulable" in failed["message"]
    cluster.wait_for(lambda: live_pods(cluster, name) == {}, 20, "every pod stopped")


def test_n_of_m_ends_a_pytorchjob_while_its_master_runs(cluster, op):
    name = "lc-pytorch-min"
    policy = {"success": {"rule": "MinWorkers", "minWorkersPercent": 50}}
    body = job(
        "PyTorchJob",
        name,
        {
            "Master": {"annotations": {RUN: "600"}},  # v1.9's rule would wait for it
            "Worker": {"replicas": 4, "restartPolicy": "Never", "annotations": {RUN: "0.5"}},
        },
        runPolicy={"cleanPodPolicy": "None"},
        lifecyclePolicy=policy,
    )
    cluster.client.create(resource("PyTorchJob"), "default", body)
    wait_condition(cluster, "PyTorchJob", name, "Succeeded", 60)
    cluster.wait_for(lambda: "master-0" not in live_pods(cluster, name), 30, "the master stopped")
    assert get(cluster, "PyTorchJob", name)["status"]["lifecyclePolicy"] == policy
