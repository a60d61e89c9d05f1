"""``spec.lifecyclePolicy`` on the shipped CRDs (divergence D100): the schema and CEL rules
refuse a contradictory policy at admission, the policy cannot be added or changed after
creation, and a full update by a client built on training-operator v1.9's types (which has no
place for the field) cannot take the policy out of force: the operator's copy in
``status.lifecyclePolicy`` survives it, and the job decodes with the policy."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from localcluster.controlplane.emulated import Registry, StatusError
from support.crd import install_crds
from tf_operator.apis.pytorch.v1.types import PyTorchJob
from tf_operator.apis.tensorflow.v1.types import TFJob

ROOT = Path(__file__).resolve().parents[3]
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
PYTORCHJOBS = ("kubeflow.org", "v1", "pytorchjobs")
PYTORCH_CRD = ROOT / "manifests" / "components" / "pytorchjob" / "crd.yaml"
TF_CRD = ROOT / "manifests" / "base" / "crd.yaml"

# The fields training-operator v1.9's Go types have, by level: what such a client decodes, and
# so all it writes back on a full update.
V19_SPEC_FIELDS = {
    "TFJob": ("runPolicy", "successPolicy", "tfReplicaSpecs", "enableDynamicWorker"),
    "PyTorchJob": ("runPolicy", "elasticPolicy", "pytorchReplicaSpecs", "nprocPerNode"),
}
V19_STATUS_FIELDS = (
    "conditions",
    "replicaStatuses",
    "startTime",
    "completionTime",
    "lastReconcileTime",
)


@pytest.fixture(scope="module")
def reg():
    r = Registry()
    install_crds(r, TF_CRD, PYTORCH_CRD)
    yield r
    r.stop()


_names = iter(range(10**6))


def replica(replicas: int, container: str = "tensorflow") -> dict:
    return {
        "replicas": replicas,
        "template": {"spec": {"containers": [{"name": container, "image": "tf:1"}]}},
    }


def tfjob(policy: dict | None, workers: int = 4, **specs: dict) -> dict:
    spec: dict = {"tfReplicaSpecs": {"PS": replica(1), "Worker": replica(workers), **specs}}
    if policy is not None:
        spec["lifecyclePolicy"] = policy
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": f"lc-{next(_names)}", "namespace": "default"},
        "spec": spec,
    }


def pytorchjob(policy: dict | None, master: bool = True) -> dict:
    specs = {"Worker": replica(2, "pytorch")}
    if master:
        specs["Master"] = replica(1, "pytorch")
    spec: dict = {"pytorchReplicaSpecs": specs}
    if policy is not None:
        spec["lifecyclePolicy"] = policy
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": f"lc-{next(_names)}", "namespace": "default"},
        "spec": spec,
    }


def refusal(reg, gvr, body: dict) -> str:
    with pytest.raises(StatusError) as info:
        reg.create(gvr, "default", copy.deepcopy(body))
    assert info.value.code == 422, info.value.message
    return info.value.message


@pytest.mark.parametrize(
    "policy",
    [
        {"success": {"rule": "Chief", "waitForEvaluators": True}},
        {"success": {"rule": "Worker0"}},
        {"success": {"rule": "AllWorkers"}},
        {"success": {"rule": "MinWorkers", "minWorkers": 4}},
        {"success": {"rule": "MinWorkers", "minWorkersPercent": 75}},
    ],
    ids=lambda p: p["success"]["rule"] + str(len(p["success"])),
)
def test_a_consistent_tfjob_policy_is_stored_as_written(reg, policy):
    body = tfjob(policy, Chief=replica(1), Evaluator=replica(1))
    stored = reg.create(TFJOBS, "default", copy.deepcopy(body))
    assert stored["spec"]["lifecyclePolicy"] == policy


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            tfjob({"success": {"rule": "MinWorkers", "minWorkers": 5}}),
            "spec.lifecyclePolicy.success.minWorkers exceeds the Worker replicas: N of M "
            "needs N <= M",
        ),
        (
            tfjob({"success": {"rule": "Chief"}}),
            "spec.lifecyclePolicy.success.rule Chief needs a Chief or Master replica",
        ),
        (
            tfjob({"success": {"rule": "MinWorkers"}}),
            "rule MinWorkers takes exactly one of minWorkers and minWorkersPercent",
        ),
        (
            tfjob({"success": {"rule": "MinWorkers", "minWorkers": 1, "minWorkersPercent": 5}}),
            "rule MinWorkers takes exactly one of minWorkers and minWorkersPercent",
        ),
        (
            tfjob({"success": {"rule": "AllWorkers", "minWorkers": 1}}),
            "the other rules take neither",
        ),
        (tfjob({"success": {"rule": "Everyone"}}), "Unsupported value"),
        (tfjob({"success": {}}), "Required value"),
        (
            {**tfjob({"success": {"rule": "Worker0"}})}
            | {
                "spec": {
                    **tfjob({"success": {"rule": "Worker0"}})["spec"],
                    "successPolicy": "AllWorkers",
                }
            },
            "spec.successPolicy (AllWorkers) and spec.lifecyclePolicy.success.rule (Worker0) "
            "contradict",
        ),
    ],
    ids=[
        "n-over-m",
        "chief-missing",
        "no-count",
        "two-counts",
        "count-wrong-rule",
        "unknown",
        "no-rule",
        "successpolicy",
    ],
)
def test_a_contradictory_tfjob_policy_is_refused_with_a_clear_message(reg, body, message):
    assert message in refusal(reg, TFJOBS, body)


def test_a_pytorchjob_takes_the_master_and_all_workers_rules_only(reg):
    stored = reg.create(PYTORCHJOBS, "default", pytorchjob({"success": {"rule": "Master"}}))
    assert stored["spec"]["lifecyclePolicy"] == {"success": {"rule": "Master"}}
    assert "Unsupported value" in refusal(
        reg, PYTORCHJOBS, pytorchjob({"success": {"rule": "Worker0"}})
    )
    assert "needs a Master replica" in refusal(
        reg, PYTORCHJOBS, pytorchjob({"success": {"rule": "Master"}}, master=False)
    )


@pytest.mark.parametrize("change", ["add", "change"])
def test_the_policy_cannot_be_added_or_changed_after_creation(reg, change):
    before = None if change == "add" else {"success": {"rule": "AllWorkers"}}
    stored = reg.create(TFJOBS, "default", tfjob(before))
    stored["spec"]["lifecyclePolicy"] = {"success": {"rule": "Worker0"}}
    with pytest.raises(StatusError) as info:
        reg.update(TFJOBS, "default", stored["metadata"]["name"], stored)
    assert "spec.lifecyclePolicy is immutable" in info.value.message


def v19_read_modify_write(reg, gvr, name: str, edit) -> dict:
    """A full update as a Go client built on v1.9's types makes it: get, decode into v1.9's
    field set only, change something, put the whole object back."""
    live = reg.get(gvr, "default", name)
    kind = live["kind"]
    decoded = {
        "apiVersion": live["apiVersion"],
        "kind": kind,
        "metadata": live["metadata"],  # ObjectMeta: annotations and all, carried through
        "spec": {k: v for k, v in live["spec"].items() if k in V19_SPEC_FIELDS[kind]},
        "status": {k: v for k, v in (live.get("status") or {}).items() if k in V19_STATUS_FIELDS},
    }
    edit(decoded)
    return reg.update(gvr, "default", name, decoded)


@pytest.mark.parametrize(
    ("gvr", "body", "cls"),
    [
        (TFJOBS, tfjob({"success": {"rule": "Chief"}}, Chief=replica(1)), TFJob),
        (PYTORCHJOBS, pytorchjob({"success": {"rule": "Master"}}), PyTorchJob),
    ],
    ids=["tfjob", "pytorchjob"],
)
def test_a_foreign_full_update_keeps_the_policy_in_force(reg, gvr, body, cls):
    created = reg.create(gvr, "default", copy.deepcopy(body))
    name = created["metadata"]["name"]
    policy = body["spec"]["lifecyclePolicy"]
    # the operator's first pass copies the policy into the status
    created["status"] = {"conditions": [], "lifecyclePolicy": policy}
    reg.update(gvr, "default", name, created, subresource="status")

    def suspend(job: dict) -> None:  # what Kueue does to a job it evicts
        job["spec"]["runPolicy"]["suspend"] = True

    after = v19_read_modify_write(reg, gvr, name, suspend)
    assert after["spec"]["runPolicy"]["suspend"] is True
    assert "lifecyclePolicy" not in after["spec"]  # the foreign client had no place for it
    assert after["status"]["lifecyclePolicy"] == policy  # the copy in force is kept
    decoded = cls.from_dict(after)
    assert decoded.run_policy.lifecycle is not None
    assert decoded.run_policy.lifecycle.to_dict() == policy


RESTART_ON_EXIT = {"action": "RestartJob", "onExitCodes": {"operator": "NotIn", "values": [0]}}


def test_a_failure_policy_is_stored_as_written(reg):
    failure = {
        "countDisruptions": False,
        "rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42, 43]}},
            {"action": "Ignore", "onDisruption": True, "onReplicaTypes": ["ps"]},
            RESTART_ON_EXIT,
        ],
    }
    stored = reg.create(TFJOBS, "default", tfjob({"failure": failure}))
    assert stored["spec"]["lifecyclePolicy"] == {"failure": failure}
    stored = reg.create(
        PYTORCHJOBS, "default", pytorchjob({"failure": {"rules": [RESTART_ON_EXIT]}})
    )
    assert stored["spec"]["lifecyclePolicy"]["failure"]["rules"] == [RESTART_ON_EXIT]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"action": "FailJob"}, "a failure rule needs at least one of onExitCodes"),
        ({"action": "Retry", "onDisruption": True}, "Unsupported value"),
        (
            {"action": "Ignore", "onReplicaTypes": ["Parameterserver"]},
            "onReplicaTypes[0]: Invalid value",
        ),
        (
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": []}},
            "should have at least 1 items",
        ),
        (
            {"action": "FailJob", "onExitCodes": {"operator": "Between", "values": [1]}},
            "Unsupported value",
        ),
    ],
    ids=["no-matcher", "action", "replica-type", "no-codes", "operator"],
)
def test_a_malformed_failure_rule_is_refused(reg, rule, message):
    assert message in refusal(reg, TFJOBS, tfjob({"failure": {"rules": [rule]}}))


def test_a_failure_rule_naming_a_type_the_job_lacks_is_left_to_the_operator(reg):
    """kube-apiserver's CEL cost budget cannot afford comparing every rule's replica types
    with the job's, so the CRD admits a known type the job lacks; the operator's validation
    fails such a job (test/unit/apis/common/v1/test_lifecycle.py)."""
    rule = {"action": "Ignore", "onReplicaTypes": ["Chief"]}
    stored = reg.create(TFJOBS, "default", tfjob({"failure": {"rules": [rule]}}))
    assert stored["spec"]["lifecyclePolicy"]["failure"]["rules"] == [rule]


def test_a_startup_policy_defaults_its_action_and_refuses_others(reg):
    stored = reg.create(TFJOBS, "default", tfjob({"startup": {"deadlineSeconds": 300}}))
    assert stored["spec"]["lifecyclePolicy"]["startup"] == {
        "deadlineSeconds": 300,
        "action": "FailJob",
    }
    assert "Unsupported value" in refusal(
        reg, TFJOBS, tfjob({"startup": {"deadlineSeconds": 1, "action": "Ignore"}})
    )
    assert "should be greater than or equal to 1" in refusal(
        reg, TFJOBS, tfjob({"startup": {"deadlineSeconds": 0}})
    )


def test_replica_type_limits_name_the_jobs_replica_types(reg):
    limits = {"Worker": 3, "ps": 0}
    stored = reg.create(TFJOBS, "default", tfjob({"failure": {"replicaTypeLimits": limits}}))
    assert stored["spec"]["lifecyclePolicy"]["failure"]["replicaTypeLimits"] == limits
    assert "replicaTypeLimits names a replica type the job does not have" in refusal(
        reg, TFJOBS, tfjob({"failure": {"replicaTypeLimits": {"Chief": 1}}})
    )
    assert "should be greater than or equal to 0" in refusal(
        reg, TFJOBS, tfjob({"failure": {"replicaTypeLimits": {"Worker": -1}}})
    )


def test_a_pytorchjob_takes_n_of_m_workers_as_the_other_master_worker_kinds_do(reg):
    policy = {"success": {"rule": "MinWorkers", "minWorkersPercent": 50}}
    stored = reg.create(PYTORCHJOBS, "default", pytorchjob(policy))
    assert stored["spec"]["lifecyclePolicy"] == policy
    assert PyTorchJob.from_dict(stored).run_policy.lifecycle.to_dict() == policy
    assert "N of M needs N <= M" in refusal(
        reg, PYTORCHJOBS, pytorchjob({"success": {"rule": "MinWorkers", "minWorkers": 3}})
    )
    assert "takes exactly one of minWorkers and minWorkersPercent" in refusal(
        reg, PYTORCHJOBS, pytorchjob({"success": {"rule": "MinWorkers"}})
    )
