"""Property tests of the emulator's validation surface: whatever a client sends as a name, a
quantity, a selector, a query parameter or a TFJob spec, the answer is an object or a 4xx
``StatusError``, never another exception (which the HTTP layer would turn into a 500)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from localcluster.apimachinery.selectors import parse_field_selector, parse_label_selector
from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.controlplane.emulated.serving import params
from localcluster.controlplane.emulated.serving.httpcore import Request
from support.crd import install_crds
from support.fuzz import FUZZ

TFJOBS = ("kubeflow.org", "v1", "tfjobs")

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
selector_text = st.text(alphabet="abc=!,() /.-_in notx<>0123", max_size=24)


@pytest.fixture(scope="module")
def reg():
    r = Registry()
    install_crds(r)
    yield r
    r.stop()


def outcome(fn, *args) -> int:
    try:
        fn(*args)
    except StatusError as e:
        assert 400 <= e.code < 500, e.status
        return e.code
    return 200


@FUZZ
@given(name=st.text(max_size=70) | json_scalars)
def test_any_name_gets_an_answer(reg, name):
    body = {"metadata": {"name": name}, "data": {}}
    if outcome(reg.create, ("", "v1", "configmaps"), "default", body) == 200:
        reg.delete(("", "v1", "configmaps"), "default", name)


@FUZZ
@given(value=json_values, part=st.sampled_from(["limits", "requests"]))
def test_any_quantity_gets_an_answer(reg, value, part):
    pod = {
        "metadata": {"generateName": "q-"},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {part: {"cpu": value}}}]},
    }
    outcome(reg.create, ("", "v1", "pods"), "default", pod)


@FUZZ
@given(node_selector=json_values, affinity=json_values)
def test_any_node_selection_gets_an_answer(reg, node_selector, affinity):
    spec = {"containers": [{"name": "c", "image": "i"}], "nodeSelector": node_selector}
    spec["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": affinity}
    }
    outcome(
        reg.create,
        ("", "v1", "pods"),
        "default",
        {"metadata": {"generateName": "n-"}, "spec": spec},
    )


@FUZZ
@given(text=selector_text)
def test_any_selector_parses_or_is_a_bad_request(text):
    for parse in (parse_label_selector, parse_field_selector):
        try:
            pred = parse(text)
        except StatusError as e:
            assert e.code == 400
            continue
        if pred is not None:
            pred({"metadata": {"labels": {"a": "b", "n": "3"}, "name": "x"}})


@FUZZ
@given(
    query=st.dictionaries(
        st.sampled_from(
            [
                "limit",
                "resourceVersion",
                "resourceVersionMatch",
                "continue",
                "watch",
                "sendInitialEvents",
            ]
        ),
        st.text(max_size=12),
    )
)
def test_any_list_query_is_checked_without_crashing(query, reg):
    req = Request("GET", "/api/v1/configmaps", dict(query), {})
    watch = params.as_bool(query.get("watch"))
    try:
        # a malformed resourceVersion: 400 for a LIST, a reasonless 500 for a WATCH (as
        # kube-apiserver 1.37 answers both)
        params.resource_version(req, listing=not watch)
        params.check_list_options(req, watch)
        limit = params.as_int(query.get("limit"), "limit")
        reg.list_page(
            ("", "v1", "configmaps"), None, None, None, limit, query.get("continue") or None
        )
    except StatusError as e:
        assert e.code in ((400, 410, 422, 500) if watch else (400, 410, 422))


def _spec_strategy():
    container = st.fixed_dictionaries(
        {"name": st.sampled_from(["tensorflow", "main", 7]), "image": st.sampled_from(["i", ""])}
    )
    template = st.fixed_dictionaries(
        {"spec": st.fixed_dictionaries({"containers": st.lists(container, max_size=2)})}
    )
    replica = (
        st.fixed_dictionaries(
            {"template": template},
            optional={
                "replicas": st.integers(-2, 2**40) | json_scalars,
                "restartPolicy": json_scalars,
            },
        )
        | json_values
    )
    keys = st.sampled_from(
        ["PS", "ps", "Worker", "WORKER", "Chief", "master", "Evaluator", "Boss", ""]
    )
    return st.fixed_dictionaries(
        {"tfReplicaSpecs": st.dictionaries(keys, replica, max_size=4) | json_values},
        optional={
            "backoffLimit": st.integers(-5, 5) | json_scalars,
            "activeDeadlineSeconds": st.integers(-5, 5),
            "cleanPodPolicy": st.sampled_from(["All", "Running", "None", "Some"]),
        },
    )


def _as_stored(specs: dict) -> dict:
    """The replica specs as the server stores them: a null the schema does not allow (a whole
    replica spec, its replicas or restart policy) is dropped, as apiextensions-apiserver does;
    nothing else changes."""

    def replica(value: object) -> object:
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if v is not None}
        return value

    return {k: replica(v) for k, v in specs.items() if v is not None}


@FUZZ
@given(name=st.sampled_from(["ok", "UpperCase", "my.job", "x" * 60, "a-b"]), spec=_spec_strategy())
def test_any_tfjob_gets_an_answer_and_nothing_is_pruned(reg, name, spec):
    body = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": spec,
    }
    try:
        stored = reg.create(TFJOBS, "default", copy.deepcopy(body))
    except StatusError as e:
        assert e.code in (400, 422), e.status
        return
    try:
        assert stored["spec"]["tfReplicaSpecs"] == _as_stored(spec["tfReplicaSpecs"])
    finally:
        reg.delete(TFJOBS, "default", name)
