"""The iterative JSON codec the client falls back to for documents too deep for orjson."""

import json

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tf_operator.k8s.client import deepjson
from tf_operator.k8s.client.rest import decode, encode

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=30,
)


@given(JSON)
def test_round_trips_as_the_standard_library_does(value):
    encoded = deepjson.dumps(value)
    assert json.loads(encoded) == value
    assert deepjson.loads(encoded) == value
    assert deepjson.loads(json.dumps(value, indent=2)) == json.loads(json.dumps(value))


def nested(depth: int) -> dict:
    value: dict = {"leaf": [1, "x", None, True, 2.5]}
    for i in range(depth - 2):
        value = {f"k{i % 3}": value}
    return value


@pytest.mark.parametrize("depth", [300, 1100, 10_000])
def test_depths_kube_apiserver_accepts(depth):
    """orjson stops at 254 levels (dumps) and 1,024 (loads); the client goes on."""
    value = nested(depth)
    assert deepjson.nesting_depth(value) == depth
    data = encode(value)  # falls back
    decoded = decode(data)  # (== on dicts this deep would itself recurse too far)
    assert deepjson.nesting_depth(decoded) == depth and deepjson.dumps(decoded) == data
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(value)


@pytest.mark.parametrize(
    "text", ["", "{", "[1,]", '{"a" 1}', '{"a":1,}', "[1 2]", "tru", "1 2", "{1:2}", '"\x01"']
)
def test_what_is_no_json_is_refused(text):
    with pytest.raises(ValueError):
        deepjson.loads(text)


def test_what_json_cannot_say_is_refused():
    for bad in (float("nan"), float("inf"), {1: 2}, object()):
        with pytest.raises((TypeError, ValueError)):
            deepjson.dumps([bad])


def test_depth_of_scalars_and_empty_containers():
    assert [deepjson.nesting_depth(v) for v in (1, {}, [], [[]], {"a": [{}]})] == [0, 1, 1, 2, 3]


@pytest.mark.parametrize(
    "value", [1, "x", {}, [], [[]], {"a": [{}]}, ({"b": (1, [2])},), nested(5), nested(300)]
)
def test_deeper_than_agrees_with_the_depth_at_every_limit(value):
    depth = deepjson.nesting_depth(value)
    for limit in range(max(0, depth - 2), depth + 3):
        assert deepjson.deeper_than(value, limit) is (depth > limit)
