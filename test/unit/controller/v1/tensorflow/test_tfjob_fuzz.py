"""Fuzz (issue 13): 2,000 generated TFJobs, a third built valid, a third valid but for one field
set to a boundary or garbage value, a third from anything the API could store where nothing
checks it (no CEL, no name rule), each stored in the fake API and synced once by the
controller, as a worker would.

For every one:
- nothing but an answer of the API escapes the sync (a worker requeues those);
- the operator refuses whatever the shipped CRD's rules, bounds, formats and enums refuse (the
  local cluster's API server evaluates them on a dry-run create): on a cluster that does not
  enforce them, the operator's own validation is the only guard (types every server checks);
- a job the operator refuses is reported, once: its status is one Failed condition with reason
  ``InvalidTFJobSpec`` naming the error, one Warning event says the same, nothing is created;
- a job it accepts gets its Created condition and at most one pass's budget of objects.

The examples are derandomized: the same 2,000 run in CI every time.
"""

from __future__ import annotations

import copy
import itertools

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.controlplane.emulated.admission import validation as cluster_validation
from support.crd import CRDS, tfjob_crd, without_checks
from tf_operator.common.jobcontroller.context import MAX_CREATIONS_PER_SYNC, ReconcileErrors
from tf_operator.common.jobcontroller.kind import InvalidJobError
from tf_operator.controller.v1.tensorflow import TFJOBS
from tf_operator.controller.v1.tensorflow.kind import TFJOB_KIND
from tf_operator.k8s.client import ApiError

TFJOB_GVR = ("kubeflow.org", "v1", "tfjobs")
EXAMPLES = 2000

# ---- generators ---------------------------------------------------------------------------

GOOD_NAMES = st.from_regex(r"[a-z][-a-z0-9]{0,18}[a-z0-9]", fullmatch=True)
BAD_NAMES = st.sampled_from(
    ["UpperCase", "a b", "-lead", "a_b", "naïve", "my.job", "1job", "job-", "x" * 70]
)
TYPES = ["PS", "Worker", "Chief", "Master", "Evaluator"]
KEYS = st.sampled_from([*TYPES, "ps", "worker", "WORKER", "chief", "evaluator", "Foo", ""])
CONTAINER = {"name": "tensorflow", "image": "img"}


def _template(containers: list) -> dict:
    return {"spec": {"containers": containers}}


valid_replica_specs = st.dictionaries(
    st.sampled_from(["PS", "Worker"]),
    st.fixed_dictionaries(
        {"template": st.just(_template([CONTAINER]))},
        optional={
            "replicas": st.integers(1, 3),
            "restartPolicy": st.sampled_from(["Always", "OnFailure", "Never", "ExitCode"]),
        },
    ),
    min_size=1,
) | st.fixed_dictionaries(
    {"Chief": st.just({"replicas": 1, "template": _template([CONTAINER])})},
    optional={"Worker": st.just({"replicas": 2, "template": _template([CONTAINER])})},
)
valid_specs = st.fixed_dictionaries(
    {"tfReplicaSpecs": valid_replica_specs},
    optional={
        "backoffLimit": st.integers(0, 5),
        "activeDeadlineSeconds": st.integers(0, 10**6),
        "ttlSecondsAfterFinished": st.integers(0, 10**6),
        "cleanPodPolicy": st.sampled_from(["All", "Running", "None"]),
    },
)

garbage = st.sampled_from([None, "x", 5, 2.5, True, [], {}])
replicas = (
    st.integers(-2, 4)
    | st.sampled_from([0, 1000, 1001, 2**31 - 1, 2**40, -(2**40)])
    | st.sampled_from(["3", True, 2.0, 2.5, None])
)
container = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["tensorflow", "sidecar", "", 5]),
        "image": st.sampled_from(["img", "", None]),
        "ports": st.sampled_from([[{"name": "tfjob-port", "containerPort": 2222}], []]),
    },
)
template = st.builds(_template, st.lists(container, max_size=3)) | garbage
replica_spec = (
    st.fixed_dictionaries(
        {},
        optional={
            "replicas": replicas,
            "restartPolicy": st.sampled_from(["Always", "Never", "ExitCode", "Sometimes", "", 3]),
            "template": template,
        },
    )
    | garbage
)
run_number = st.integers(-3, 5) | st.sampled_from([2**31, 2**63, "5", 1.5, None])
any_specs = (
    st.fixed_dictionaries(
        {"tfReplicaSpecs": st.dictionaries(KEYS, replica_spec, max_size=4) | garbage},
        optional={
            "backoffLimit": run_number,
            "activeDeadlineSeconds": run_number,
            "ttlSecondsAfterFinished": run_number,
            "cleanPodPolicy": st.sampled_from(["All", "Running", "None", "Some", 5]),
        },
    )
    | garbage
)


@st.composite
def mutated_specs(draw: st.DrawFn) -> dict:
    """A valid spec with one field set to a boundary or garbage value: where the operator's
    rules and the CRD's are most likely to part."""
    spec = copy.deepcopy(draw(valid_specs))
    replica = draw(st.sampled_from(sorted(spec["tfReplicaSpecs"])))
    target = spec["tfReplicaSpecs"][replica]
    where = draw(st.sampled_from(["spec", "replica", "container", "extra container"]))
    if where == "spec":
        field = draw(st.sampled_from(["backoffLimit", "activeDeadlineSeconds", "cleanPodPolicy"]))
        spec[field] = draw(run_number | st.sampled_from(["All", "Some"]))
    elif where == "replica":
        target[draw(st.sampled_from(["replicas", "restartPolicy", "template"]))] = draw(
            replicas | template | garbage
        )
    else:
        containers = target["template"]["spec"]["containers"]
        if where == "extra container":
            containers.append({"name": "sidecar", "image": "img"})
        field = draw(st.sampled_from(["name", "image", "ports"]))
        containers[-1][field] = draw(st.sampled_from([5, None, "", "x", [], {}]))
    return spec


jobs = st.one_of(
    st.tuples(GOOD_NAMES, valid_specs),
    st.tuples(GOOD_NAMES, mutated_specs()),
    st.tuples(GOOD_NAMES | BAD_NAMES, any_specs),
)

# ---- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crd_registries():
    """Registries serving the shipped CRD whole, and without its rules, bounds, formats and
    enums (what every API server checks): the oracles of what admission refuses."""
    registries = []
    for crd in (tfjob_crd(), without_checks(tfjob_crd())):
        registry = Registry()
        registry.create(CRDS, None, crd)
        registries.append(registry)
    yield registries
    for registry in registries:
        registry.stop()


@pytest.fixture
def fuzz_harness(make_harness, monkeypatch):
    """One controller for every example (Hypothesis runs them in one call of the test), each
    in its own namespace; the fake API stores any name, as a store without admission would."""
    check = cluster_validation.validate_name
    monkeypatch.setattr(
        cluster_validation,
        "validate_name",
        lambda name, rule, field="metadata.name": (
            []
            if field == "metadata.name" and rule in ("subdomain", "crd")
            else check(name, rule, field)
        ),
    )
    return make_harness()


_namespaces = (f"fuzz-{i}" for i in itertools.count())


def _refused(registry: Registry, job: dict) -> bool:
    try:
        registry.create(TFJOB_GVR, "default", copy.deepcopy(job), dry_run=True)
    except StatusError as err:
        assert err.code in (400, 422), err.status
        return True
    return False


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(example=jobs)
def test_fuzzed_jobs_are_run_or_reported(fuzz_harness, crd_registries, example):
    name, spec = example
    harness, namespace = fuzz_harness, next(_namespaces)
    job = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name}}
    if spec is not None:
        job["spec"] = spec
    whole, types_only = crd_registries
    # Refused by the CRD's rules, bounds, formats or enums, which a cluster may not enforce
    # (refused for its types, it cannot be stored on any cluster serving the CRD).
    refused_by_crd = not _refused(types_only, job) and _refused(whole, job)
    stored = harness.client.resource(TFJOBS).create(copy.deepcopy(job), namespace=namespace)
    harness.tfjob_informer.get_indexer().add(stored)
    harness.recorder.clear()
    harness.client.clear_actions()
    try:
        TFJOB_KIND.decode(stored)
        error = None
    except InvalidJobError as err:
        error = str(err)
    assert not (refused_by_crd and error is None), (
        f"the CRD refuses it, the operator runs it: {job}"
    )
    event(f"refused by the CRD: {refused_by_crd}, by the operator: {error is not None}")

    try:
        harness.ctr.sync(f"{namespace}/{name}")
    except (ApiError, ReconcileErrors) as err:  # answers of the API: a worker requeues them
        errors = err.errors if isinstance(err, ReconcileErrors) else [err]
        assert all(isinstance(e, ApiError) for e in errors), errors

    status = harness.client.resource(TFJOBS).get(name, namespace=namespace).get("status") or {}
    created = [a for a in harness.client.actions if a.verb == "create"]
    if error is not None:
        message = f"Failed to marshal the object to TFJob; the spec is invalid: {error}"
        [condition] = status["conditions"]
        assert (condition["type"], condition["reason"]) == ("Failed", "InvalidTFJobSpec")
        assert condition["message"] == message
        assert harness.recorder.events == [f"Warning InvalidTFJobSpec {message}"]
        assert created == []
    else:
        assert status["conditions"][0]["type"] == "Created"
        assert all(c["reason"] != "InvalidTFJobSpec" for c in status["conditions"])
        assert len(created) <= MAX_CREATIONS_PER_SYNC
