"""``spec.lifecyclePolicy`` on the XGBoostJob, JAXJob and PaddleJob CRDs (divergences D100,
D110): each takes the completion rules its replica types make sense of (XGBoostJob and
PaddleJob: ``Master``, ``AllWorkers``, ``MinWorkers``; JAXJob: ``Worker0``, ``AllWorkers``,
``MinWorkers``), refuses a contradictory policy with the same messages as the PyTorchJob and
TFJob CRDs, refuses any change after creation, and keeps the operator's status fields (the
policy in force, the restarts by cause and by replica type) rather than pruning them; the
operator refuses what the CRD refuses; and the three CRDs' policy schemas do not drift from
the PyTorchJob one they share their failure and start-up parts with."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from localcluster.controlplane.emulated import Registry, StatusError
from support.crd import (
    JAX_CRD_FILE,
    PADDLE_CRD_FILE,
    PYTORCH_CRD_FILE,
    XGBOOST_CRD_FILE,
    install_crds,
)
from tf_operator.apis.common.v1.run_policy import DEFAULTS_V1_9
from tf_operator.common.jobcontroller.kind import InvalidJobError, JobKind
from tf_operator.controller.v1.jax.kind import JAXJOB_KIND
from tf_operator.controller.v1.paddle.kind import PADDLEJOB_KIND
from tf_operator.controller.v1.xgboost.kind import XGBOOSTJOB_KIND

_names = iter(range(10**6))


@dataclass(frozen=True)
class Kind:
    name: str
    plural: str
    field: str
    container: str
    types: dict[str, int]  # the replica types and counts of the jobs below
    crd: Path
    job_kind: JobKind[Any]
    rules: tuple[str, ...]  # the success rules the kind takes

    def __str__(self) -> str:
        return self.name

    @property
    def resource(self) -> tuple[str, str, str]:
        return ("kubeflow.org", "v1", self.plural)

    def job(self, policy: dict | None, **types: int) -> dict:
        counts = types or self.types
        specs = {
            t: {
                "replicas": n,
                "template": {"spec": {"containers": [{"name": self.container, "image": "i"}]}},
            }
            for t, n in counts.items()
        }
        spec: dict = {self.field: specs}
        if policy is not None:
            spec["lifecyclePolicy"] = policy
        return {
            "apiVersion": "kubeflow.org/v1",
            "kind": self.name,
            "metadata": {"name": f"lc-{next(_names)}", "namespace": "default"},
            "spec": spec,
        }


XGBOOST = Kind(
    "XGBoostJob", "xgboostjobs", "xgbReplicaSpecs", "xgboost", {"Master": 1, "Worker": 3},
    XGBOOST_CRD_FILE, XGBOOSTJOB_KIND, ("Master", "AllWorkers", "MinWorkers"),
)  # fmt: skip
JAX = Kind(
    "JAXJob", "jaxjobs", "jaxReplicaSpecs", "jax", {"Worker": 3},
    JAX_CRD_FILE, JAXJOB_KIND, ("Worker0", "AllWorkers", "MinWorkers"),
)  # fmt: skip
PADDLE = Kind(
    "PaddleJob", "paddlejobs", "paddleReplicaSpecs", "paddle", {"Master": 1, "Worker": 3},
    PADDLE_CRD_FILE, PADDLEJOB_KIND, ("Master", "AllWorkers", "MinWorkers"),
)  # fmt: skip
KINDS = (XGBOOST, JAX, PADDLE)


@pytest.fixture(scope="module")
def reg():
    r = Registry()
    install_crds(r, XGBOOST_CRD_FILE, JAX_CRD_FILE, PADDLE_CRD_FILE)
    yield r
    r.stop()


def refusal(reg, kind: Kind, body: dict) -> str:
    with pytest.raises(StatusError) as info:
        reg.create(kind.resource, "default", copy.deepcopy(body))
    assert info.value.code == 422, info.value.message
    return info.value.message


def success(rule: str, **counts: int) -> dict:
    return {"success": {"rule": rule, **counts}}


def _with_counts(rule: str) -> dict:
    return success(rule, minWorkers=2) if rule == "MinWorkers" else success(rule)


FULL_FAILURE = {
    "countDisruptions": True,
    "replicaTypeLimits": {"Worker": 3},
    "rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
        {"action": "Ignore", "onDisruption": True, "onReplicaTypes": ["worker"]},
        {"action": "RestartJob", "onExitCodes": {"operator": "NotIn", "values": [0]}},
    ],
}
STARTUP = {"deadlineSeconds": 300, "action": "RestartJob", "publishNotReadyAddresses": True}
ACCEPTED = [
    (kind, {**_with_counts(rule), "failure": FULL_FAILURE, "startup": STARTUP})
    for kind in KINDS
    for rule in kind.rules
] + [(kind, success("MinWorkers", minWorkersPercent=50)) for kind in KINDS]


@pytest.mark.parametrize(
    ("kind", "policy"),
    ACCEPTED,
    ids=[f"{k}-{p['success']['rule']}-{len(p['success'])}" for k, p in ACCEPTED],
)
def test_each_kind_stores_a_consistent_policy_as_written_and_the_operator_decodes_it(
    reg, kind, policy
):
    stored = reg.create(kind.resource, "default", kind.job(policy))
    assert stored["spec"]["lifecyclePolicy"] == policy
    job = kind.job_kind.decode(stored, DEFAULTS_V1_9)
    assert job.run_policy.lifecycle is not None
    assert job.run_policy.lifecycle.to_dict() == policy


REFUSED: list[tuple[Kind, Callable[[], dict], str]] = [
    # a rule the kind does not take
    (XGBOOST, lambda: XGBOOST.job(success("Worker0")), "Unsupported value"),
    (XGBOOST, lambda: XGBOOST.job(success("Chief")), "Unsupported value"),
    (PADDLE, lambda: PADDLE.job(success("Worker0")), "Unsupported value"),
    (JAX, lambda: JAX.job(success("Master")), "Unsupported value"),
    (JAX, lambda: JAX.job(success("Chief")), "Unsupported value"),
    # a rule naming a replica type the job lacks
    (
        PADDLE,
        lambda: PADDLE.job(success("Master"), Worker=2),
        "spec.lifecyclePolicy.success.rule Master needs a Master replica",
    ),
    (
        XGBOOST,
        lambda: XGBOOST.job(success("AllWorkers"), Master=1),
        "spec.lifecyclePolicy.success.rule AllWorkers needs Worker replicas",
    ),
    (
        PADDLE,
        lambda: PADDLE.job(success("MinWorkers", minWorkers=1), Master=1),
        "spec.lifecyclePolicy.success.rule MinWorkers needs Worker replicas",
    ),
    # N of M with N > M, counts on the wrong rule
    *[
        (
            kind,
            lambda kind=kind: kind.job(success("MinWorkers", minWorkers=4)),
            "spec.lifecyclePolicy.success.minWorkers exceeds the Worker replicas: N of M "
            "needs N <= M",
        )
        for kind in KINDS
    ],
    (
        JAX,
        lambda: JAX.job(success("MinWorkers")),
        "rule MinWorkers takes exactly one of minWorkers and minWorkersPercent",
    ),
    (
        XGBOOST,
        lambda: XGBOOST.job(success("AllWorkers", minWorkers=1)),
        "the other rules take neither",
    ),
    (
        PADDLE,
        lambda: PADDLE.job(success("MinWorkers", minWorkersPercent=101)),
        "should be less than or equal to 100",
    ),
    # failure rules: a type the kind does not have, a type limit the job does not have
    (
        JAX,
        lambda: JAX.job(
            {"failure": {"rules": [{"action": "Ignore", "onReplicaTypes": ["Master"]}]}}
        ),
        "onReplicaTypes[0]: Invalid value",
    ),
    (
        XGBOOST,
        lambda: XGBOOST.job(
            {"failure": {"rules": [{"action": "Ignore", "onReplicaTypes": ["PS"]}]}}
        ),
        "onReplicaTypes[0]: Invalid value",
    ),
    (
        PADDLE,
        lambda: PADDLE.job({"failure": {"replicaTypeLimits": {"Master": 1}}}, Worker=2),
        "spec.lifecyclePolicy.failure.replicaTypeLimits names a replica type the job does not have",
    ),
    (
        JAX,
        lambda: JAX.job({"failure": {"rules": [{"action": "FailJob"}]}}),
        "a failure rule needs at least one of onExitCodes",
    ),
    (
        XGBOOST,
        lambda: XGBOOST.job({"startup": {"deadlineSeconds": 0}}),
        "should be greater than or equal to 1",
    ),
    (
        PADDLE,
        lambda: PADDLE.job({"startup": {"action": "Ignore"}}),
        "Unsupported value",
    ),
]
REFUSED_IDS = [f"{k}-{i}" for i, (k, _, _) in enumerate(REFUSED)]


@pytest.mark.parametrize(("kind", "body", "message"), REFUSED, ids=REFUSED_IDS)
def test_a_contradictory_policy_is_refused_with_a_clear_message(reg, kind, body, message):
    assert message in refusal(reg, kind, body())


# What the CRD refuses by its schema alone (an enum, a pattern, a bound) the operator refuses
# by its own rules, with its own words; these cases are refused by both.
@pytest.mark.parametrize(("kind", "body", "message"), REFUSED, ids=REFUSED_IDS)
def test_the_operator_refuses_what_the_crd_refuses(kind, body, message):
    with pytest.raises(InvalidJobError):
        kind.job_kind.decode(body(), DEFAULTS_V1_9)


@pytest.mark.parametrize("kind", KINDS, ids=str)
@pytest.mark.parametrize("change", ["add", "change"])
def test_the_policy_cannot_be_added_or_changed_after_creation(reg, kind, change):
    before = None if change == "add" else success("AllWorkers")
    stored = reg.create(kind.resource, "default", kind.job(before))
    stored["spec"]["lifecyclePolicy"] = success("MinWorkers", minWorkers=1)
    with pytest.raises(StatusError) as info:
        reg.update(kind.resource, "default", stored["metadata"]["name"], stored)
    assert "spec.lifecyclePolicy is immutable" in info.value.message


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_the_status_keeps_the_policy_in_force_and_the_restart_counts(reg, kind):
    """The operator's status write survives the CRD's pruning, and a full update by a client
    that knows no lifecyclePolicy (v1.9's Go types) leaves the policy in force."""
    policy = {**_with_counts(kind.rules[0]), "failure": {"replicaTypeLimits": {"Worker": 2}}}
    created = reg.create(kind.resource, "default", kind.job(policy))
    name = created["metadata"]["name"]
    written = {
        "conditions": [],
        "lifecyclePolicy": policy,
        "restartsByCause": {"Disruption": 1, "FailureRule": 2, "StartupDeadline": 1},
        "restartsByReplicaType": {"Worker": 2},
        "exitCodeRestarts": {"count": 3, "countedPods": ["a", "b"]},
    }
    created["status"] = copy.deepcopy(written)
    after = reg.update(kind.resource, "default", name, created, subresource="status")
    assert after["status"] == written
    live = reg.get(kind.resource, "default", name)
    live["spec"].pop("lifecyclePolicy")  # what a client on v1.9's types sends back
    live["spec"]["runPolicy"]["suspend"] = True
    updated = reg.update(kind.resource, "default", name, live)
    assert "lifecyclePolicy" not in updated["spec"]
    assert updated["status"]["lifecyclePolicy"] == policy
    job = kind.job_kind.decode(updated, DEFAULTS_V1_9)
    assert job.run_policy.lifecycle is not None
    assert job.run_policy.lifecycle.to_dict() == policy


def _policy_schema(path: Path) -> tuple[dict, dict]:
    crd = yaml.safe_load(path.read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    return schema["spec"]["properties"]["lifecyclePolicy"], schema["status"]["properties"]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_the_policy_schema_is_pytorchjobs_but_for_the_kinds_rules_and_replica_types(kind):
    """One schema, written out in each CRD (a CRD cannot refer to another's): they must not
    drift apart."""
    ours, status = _policy_schema(kind.crd)
    theirs, pytorch_status = _policy_schema(PYTORCH_CRD_FILE)
    assert status["lifecyclePolicy"] == ours  # one schema for the spec and the status copy
    for name in ("restartsByCause", "restartsByReplicaType"):
        assert status[name] == pytorch_status[name]
    assert ours["properties"]["success"]["properties"]["rule"]["enum"] == list(kind.rules)
    ours, theirs = copy.deepcopy(ours), copy.deepcopy(theirs)
    for schema in (ours, theirs):
        schema["properties"]["success"]["properties"]["rule"].pop("enum")
        failure = schema["properties"]["failure"]["properties"]
        failure["rules"]["items"]["properties"]["onReplicaTypes"]["items"].pop("pattern")
        failure["replicaTypeLimits"].pop("maxProperties")
        schema["properties"]["startup"]["properties"]["ordered"].pop("description")
    assert ours == theirs
    rtypes = "|".join(t.lower() for t in kind.types)
    _, status = _policy_schema(kind.crd)
    items = status["lifecyclePolicy"]["properties"]["failure"]["properties"]["rules"]["items"]
    assert items["properties"]["onReplicaTypes"]["items"]["pattern"] == f"(?i)^({rtypes})$"
