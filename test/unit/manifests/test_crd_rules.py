"""The shipped TFJob CRD on the local cluster's API server: schema plus CEL rules decide at
admission what a user should hear about at ``kubectl apply`` time (issue 13 #5, #8, #9)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from localcluster.controlplane.emulated import Registry, StatusError
from support.crd import install_crds

ROOT = Path(__file__).resolve().parents[3]
TFJOBS = ("kubeflow.org", "v1", "tfjobs")
EXAMPLES = sorted((ROOT / "examples").rglob("*.yaml"))


@pytest.fixture(scope="module")
def reg():
    r = Registry()
    install_crds(r)
    yield r
    r.stop()


def replica(replicas=1, container="tensorflow") -> dict:
    return {
        "replicas": replicas,
        "template": {"spec": {"containers": [{"name": container, "image": "tf:1"}]}},
    }


def job(name="job", **specs) -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {"tfReplicaSpecs": specs or {"Worker": replica()}},
    }


_names = iter(range(10**6))


def create(reg, body: dict) -> dict:
    body = copy.deepcopy(body)
    return reg.create(TFJOBS, "default", body)


def rejected(reg, body: dict) -> list[dict]:
    with pytest.raises(StatusError) as info:
        reg.create(TFJOBS, "default", copy.deepcopy(body))
    assert (info.value.code, info.value.reason) == (422, "Invalid"), info.value.message
    assert info.value.status["details"]["kind"] == "TFJob"
    return info.value.status["details"]["causes"]


def messages(causes: list[dict]) -> str:
    return " | ".join(f"{c['field']}: {c['message']}" for c in causes)


def tfjob_examples():
    for path in EXAMPLES:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "TFJob":
                yield pytest.param(doc, id=str(path.relative_to(ROOT)))


@pytest.mark.parametrize("doc", list(tfjob_examples()))
def test_every_example_is_admitted(reg, doc):
    doc = copy.deepcopy(doc)
    doc["metadata"]["namespace"] = "default"
    doc["metadata"]["name"] = f"ex-{next(_names)}"
    # nothing pruned; runPolicy defaulted to {} then suspend to false (D90)
    run_policy = {"suspend": False, **(doc["spec"].get("runPolicy") or {})}
    group, version = doc["apiVersion"].split("/")
    stored = reg.create((group, version, "tfjobs"), "default", doc)  # at the version written
    assert stored["spec"] == {**doc["spec"], "runPolicy": run_policy}


# ------------------------------------------------------------------ finding 8: keys in any case
def test_replica_keys_in_any_case_are_stored_intact(reg):
    body = job("mixed-case", Ps=replica(2), WORKER=replica(3), chief=replica(1))
    stored = reg.create(TFJOBS, "default", copy.deepcopy(body))
    assert stored["spec"]["tfReplicaSpecs"] == body["spec"]["tfReplicaSpecs"]


def test_unknown_replica_types_are_refused_with_a_clear_message(reg):
    causes = rejected(reg, job("unknown", Worker=replica(), Parameterserver=replica()))
    assert causes == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: unknown replica type: expected "
            "PS, Worker, Chief, Master or Evaluator (in any case)",
            "field": "spec.tfReplicaSpecs",
        }
    ]


def test_one_type_spelt_twice_is_refused(reg):
    causes = rejected(reg, job("twice", worker=replica(), Worker=replica()))
    assert "a replica type is given twice" in messages(causes)


@pytest.mark.parametrize(
    ("specs", "why"),
    [
        ({"Chief": replica(), "master": replica()}, "at most one of Chief and Master"),
        ({"Chief": replica(2)}, "Chief, Master and Evaluator take at most 1 replica"),
        ({"evaluator": replica(2)}, "Chief, Master and Evaluator take at most 1 replica"),
        ({"PS": replica(0), "Worker": replica()}, "PS and Worker at least 1"),
        ({"Worker": replica(container="main")}, "needs a container named tensorflow"),
        ({"Worker": {"replicas": 1}}, "needs a container named tensorflow"),
        ({"Worker": replica(1001)}, "should be less than or equal to 1000"),
        ({"Worker": replica(2**31 - 1)}, "should be less than or equal to 1000"),
        ({"Worker": replica(2**40)}, "should be less than or equal to 1000"),
        ({"Worker": replica(2**70)}, "must be of type integer"),
    ],
)
def test_replica_rules(reg, specs, why):
    assert why in messages(rejected(reg, job(f"r{next(_names)}", **specs)))


def test_evaluator_may_have_zero_replicas(reg):
    assert create(reg, job("eval-zero", Worker=replica(), Evaluator=replica(0)))


@pytest.mark.parametrize(
    "field", ["backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"]
)
def test_negative_durations_and_limits_are_refused(reg, field):
    body = job(f"neg-{next(_names)}")
    body["spec"][field] = -1
    causes = rejected(reg, body)
    assert causes[0]["field"] == f"spec.{field}"
    assert causes[0]["message"].endswith("should be greater than or equal to 0")
    body["spec"][field] = 0
    assert create(reg, body)


# ------------------------------------------------------------------ finding 5: names
@pytest.mark.parametrize("name", ["UpperCase", "a b", "-lead", "a_b", "naïve", "trail-"])
def test_names_that_are_no_subdomain_are_refused(reg, name):
    causes = rejected(reg, job(name))
    assert causes[0]["field"] == "metadata.name"


@pytest.mark.parametrize("name", ["my.job", "1job", "9"])
def test_names_that_make_no_service_name_are_refused(reg, name):
    causes = rejected(reg, job(name))
    assert [c["field"] for c in causes] == ["<nil>"]
    assert "TFJob names must be DNS-1035 labels" in causes[0]["message"]


def test_the_longest_generated_service_name_must_fit_63_characters(reg):
    # worker-999 is the longest suffix with 1000 workers: 63 - len("-worker-999") = 52
    assert create(reg, job("a" * 52, Worker=replica(1000)))
    causes = rejected(reg, job("b" * 53, Worker=replica(1000)))
    assert causes[0]["message"].startswith(f"Invalid value: TFJob name {'b' * 53} is too long")
    # a single replica leaves room for a longer name (-worker-0)
    assert create(reg, job("c" * 54, Worker=replica(1)))


# ------------------------------------------------------------------ updates
def test_an_invalid_edit_is_refused_and_the_status_stays_writable(reg):
    created = create(reg, job("edit-me", Worker=replica(2)))
    edited = copy.deepcopy(created)
    edited["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 5000
    with pytest.raises(StatusError) as info:
        reg.update(TFJOBS, "default", "edit-me", edited)
    assert info.value.code == 422
    status = {"status": {"conditions": [{"type": "Created", "status": "True"}]}}
    written = reg.patch(TFJOBS, "default", "edit-me", status, "merge", "status")
    assert written["status"]["conditions"][0]["type"] == "Created"


# ------------------------------------------------------------------ training-operator v1.9's fields
def v19(name: str, run_policy: dict | None = None, **spec) -> dict:
    body = job(name)
    if run_policy is not None:
        body["spec"]["runPolicy"] = run_policy
    body["spec"].update(spec)
    return body


def test_every_v1_9_field_is_stored_as_written(reg):
    """Strict field validation (kubectl's) knows them all, and nothing is pruned."""
    body = v19(
        "v19-all",
        {
            "cleanPodPolicy": "None",
            "ttlSecondsAfterFinished": 60,
            "activeDeadlineSeconds": 600,
            "backoffLimit": 3,
            "schedulingPolicy": {
                "minAvailable": 1,
                "queue": "research",
                "minResources": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 1},
                "priorityClass": "high",
                "scheduleTimeoutSeconds": 30,
            },
            "suspend": True,
            "managedBy": "kueue.x-k8s.io/multikueue",
        },
        successPolicy="AllWorkers",
        enableDynamicWorker=True,
    )
    with reg.field_validation("Strict"):
        assert create(reg, body)["spec"] == body["spec"]


def test_run_policy_defaults_to_an_empty_one_and_suspend_to_false(reg):
    """v1.9's CRD defaults suspend; ours also gives a v0.5.3-style job an empty runPolicy
    (D90), which the v1.9 SDK's model requires; its top-level fields stay as written."""
    assert create(reg, v19("v19-default", {"backoffLimit": 1}))["spec"]["runPolicy"] == {
        "backoffLimit": 1,
        "suspend": False,
    }
    old = v19("v053-default")
    old["spec"]["cleanPodPolicy"] = "All"
    stored = create(reg, old)["spec"]
    assert stored["runPolicy"] == {"suspend": False} and stored["cleanPodPolicy"] == "All"


@pytest.mark.parametrize(
    "field, nested, flat, message",
    [
        (
            "cleanPodPolicy",
            "None",
            "All",
            "spec.runPolicy.cleanPodPolicy (None) and spec.cleanPodPolicy (All) differ",
        ),
        ("backoffLimit", 1, 2, "spec.runPolicy.backoffLimit and spec.backoffLimit differ"),
        (
            "activeDeadlineSeconds",
            10,
            20,
            "spec.runPolicy.activeDeadlineSeconds and spec.activeDeadlineSeconds differ",
        ),
        (
            "ttlSecondsAfterFinished",
            0,
            3,
            "spec.runPolicy.ttlSecondsAfterFinished and spec.ttlSecondsAfterFinished differ",
        ),
    ],
)
def test_both_placements_must_agree(reg, field, nested, flat, message):
    """The operator's D55: equal values are fine, different ones are refused naming both.

    Only the enum's values are quoted back: kube-apiserver estimates ``string(int)`` in a
    messageExpression as unbounded and refuses the CRD, so the numeric rules have static
    messages."""
    name = f"both-{next(_names)}"
    assert create(reg, v19(name, {field: nested}, **{field: nested}))
    causes = rejected(reg, v19(f"{name}-x", {field: nested}, **{field: flat}))
    assert message in messages(causes)
    assert "give the field once, or the same value in both places" in messages(causes)


@pytest.mark.parametrize("bad", [{"cleanPodPolicy": "Sometimes"}, {"backoffLimit": -1}])
def test_run_policy_fields_have_the_top_level_bounds(reg, bad):
    assert rejected(reg, v19(f"rp-{next(_names)}", bad))


# The facts of training-operator v1.9's TestValidateTFJob (pkg/webhooks/tensorflow).
@pytest.mark.parametrize(
    "name, specs, run_policy, field, why",
    [
        # "TFJob name does not meet DNS1035"
        ("00test", None, None, "", "TFJob names must be DNS-1035 labels"),
        (
            "test",
            {"Worker": {"template": {"spec": {"containers": []}}}},
            None,
            "",
            "needs a container named tensorflow",
        ),
        (
            "test",
            {
                "Worker": {
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": ""}]}}
                }
            },
            None,
            "",
            "every container of the pod template needs an image",
        ),
        (
            "test",
            {"Worker": {"template": {"spec": {"containers": [{"name": "tensorflow"}]}}}},
            None,
            "",
            "every container of the pod template needs an image",
        ),
        (
            "test",
            {
                "Worker": {
                    "template": {
                        "spec": {
                            "containers": [{"name": "", "image": "kubeflow/tf-dist-mnist-test:1.0"}]
                        }
                    }
                }
            },
            None,
            "",
            "needs a container named tensorflow",
        ),
        (
            "test",
            {"Chief": replica(), "Master": replica()},
            None,
            "",
            "at most one of Chief and Master",
        ),
        (
            "test",
            None,
            {"managedBy": "other-job-controller"},
            "spec.runPolicy.managedBy",
            'Unsupported value: "other-job-controller"',
        ),
    ],
)
def test_v1_9_webhook_table(reg, name, specs, run_policy, field, why):
    body = v19(name, run_policy)
    if specs is not None:
        body["spec"]["tfReplicaSpecs"] = specs
    causes = rejected(reg, body)
    if field:
        assert field in [c["field"] for c in causes]
    assert why in messages(causes)


@pytest.mark.parametrize(
    "manager", [None, "kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"]
)
def test_v1_9_valid_managers(reg, manager):
    """v1.9's "valid tfJob" case (and both supported managers)."""
    run_policy = None if manager is None else {"managedBy": manager}
    assert create(reg, v19(f"mgr-{next(_names)}", run_policy))


def _update(reg, name: str, edit) -> dict:
    current = reg.get(TFJOBS, "default", name)
    edit(current["spec"])
    return reg.update(TFJOBS, "default", name, current)


@pytest.mark.parametrize(
    "before, after",
    [
        (None, "kueue.x-k8s.io/multikueue"),
        ("kueue.x-k8s.io/multikueue", None),
        ("kueue.x-k8s.io/multikueue", "kubeflow.org/training-operator"),
        (None, "kubeflow.org/training-operator"),
    ],
)
def test_managed_by_is_immutable(reg, before, after):
    """v1.9's ValidateRunPolicyUpdate: setting, changing or removing it is refused."""
    name = f"imm-{next(_names)}"
    create(reg, v19(name, {} if before is None else {"managedBy": before}))

    def edit(spec):
        if after is None:
            spec["runPolicy"].pop("managedBy")
        else:
            spec["runPolicy"]["managedBy"] = after

    with pytest.raises(StatusError) as info:
        _update(reg, name, edit)
    assert "spec.runPolicy.managedBy is immutable" in info.value.message
    # other edits of the run policy go through
    _update(reg, name, lambda spec: spec["runPolicy"].update(suspend=True))


def test_the_queue_is_immutable(reg):
    """v1.9's transition rule on schedulingPolicy.queue."""
    name = f"queue-{next(_names)}"
    create(reg, v19(name, {"schedulingPolicy": {"queue": "a"}}))
    with pytest.raises(StatusError) as info:
        _update(reg, name, lambda spec: spec["runPolicy"]["schedulingPolicy"].update(queue="b"))
    assert "spec.runPolicy.schedulingPolicy.queue is immutable" in info.value.message
    updated = _update(
        reg, name, lambda spec: spec["runPolicy"]["schedulingPolicy"].update(minAvailable=1)
    )
    assert updated["spec"]["runPolicy"]["schedulingPolicy"] == {"queue": "a", "minAvailable": 1}


@pytest.mark.parametrize("value, ok", [("", True), ("AllWorkers", True), ("allworkers", False)])
def test_success_policy_values(reg, value, ok):
    body = v19(f"sp-{next(_names)}", successPolicy=value)
    if ok:
        assert create(reg, body)
    else:
        assert 'Unsupported value: "allworkers"' in messages(rejected(reg, body))


def test_bad_min_resources_are_refused(reg):
    body = v19(f"mr-{next(_names)}", {"schedulingPolicy": {"minResources": {"cpu": "two"}}})
    assert "spec.runPolicy.schedulingPolicy.minResources.cpu" in messages(rejected(reg, body))


def test_min_task_member_is_keyed_by_the_jobs_replica_types(reg):
    """The operator's minTaskMember (D77): replica types in any case, counts from 0."""
    ok = v19(f"mt-{next(_names)}", {"schedulingPolicy": {"minTaskMember": {"worker": 1}}})
    assert create(reg, ok)["spec"]["runPolicy"]["schedulingPolicy"]["minTaskMember"] == {
        "worker": 1
    }
    unknown = v19(f"mt-{next(_names)}", {"schedulingPolicy": {"minTaskMember": {"PS": 1}}})
    assert "names a replica type the job does not have" in messages(rejected(reg, unknown))
    negative = v19(f"mt-{next(_names)}", {"schedulingPolicy": {"minTaskMember": {"Worker": -1}}})
    assert "spec.runPolicy.schedulingPolicy.minTaskMember.Worker" in messages(
        rejected(reg, negative)
    )


# ------------------------------------------------------------------ issue 27: ports, int32
@pytest.mark.parametrize("port", [70000, 0, -1, True, 2222.5, "2222", "abc", None])
def test_container_ports_must_be_integers_from_1_to_65535(reg, port):
    """The tensorflow container's tfjob-port goes into TF_CONFIG and the replica's Service."""
    body = job(f"port-{next(_names)}")
    entry = (
        {"name": "tfjob-port"} if port is None else {"name": "tfjob-port", "containerPort": port}
    )
    body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["ports"] = [entry]
    causes = rejected(reg, body)
    assert "containerPort" in messages(causes)


def test_a_valid_port_is_admitted(reg):
    body = job(f"port-{next(_names)}")
    ports = [{"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}]
    body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["ports"] = ports
    stored = create(reg, body)
    assert (
        stored["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["ports"]
        == ports
    )


@pytest.mark.parametrize("field", ["ttlSecondsAfterFinished", "backoffLimit"])
@pytest.mark.parametrize("nested", [False, True])
def test_int32_fields_stop_at_int32(reg, field, nested):
    """v0.5.3's int32 fields: the operator refuses more, so the CRD does too."""
    body = job(f"i32-{next(_names)}")
    where = body["spec"].setdefault("runPolicy", {}) if nested else body["spec"]
    where[field] = 2**31
    causes = rejected(reg, body)
    assert causes[0]["message"].endswith("should be less than or equal to 2147483647")
    where[field] = 2**31 - 1
    assert create(reg, body)


def test_jobs_stored_before_the_run_policy_default_read_with_it_once_the_crd_is_updated():
    """A cluster upgraded from a CRD without D90's default: its stored TFJobs read with
    ``runPolicy: {suspend: false}`` once the shipped CRD is applied, as kube-apiserver defaults
    what it reads from etcd, and keep their resourceVersion (nothing is written)."""
    from support.crd import CRDS, tfjob_crd

    shipped = tfjob_crd()
    older = copy.deepcopy(shipped)
    for version in older["spec"]["versions"]:  # v1 and v1beta2 may share one schema (YAML)
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        spec["properties"]["runPolicy"].pop("default", None)
    r = Registry()
    try:
        r.create(CRDS, None, older)
        stored = create(r, job("before-upgrade"))
        assert "runPolicy" not in stored["spec"]
        current = r.get(CRDS, None, shipped["metadata"]["name"])
        r.update(
            CRDS, None, shipped["metadata"]["name"], {**shipped, "metadata": current["metadata"]}
        )
        read = r.get(TFJOBS, "default", "before-upgrade")
        assert read["spec"]["runPolicy"] == {"suspend": False}
        assert read["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    finally:
        r.stop()
