"""The API server's JSON: bodies parse exactly as the standard parser with its float and
constant hooks reads them, whichever parser does the work (orjson takes the bodies without
floats or huge integers), and replies encode to the same JSON."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localcluster.apimachinery.quantity import JSONFloat
from localcluster.controlplane.emulated import StatusError
from localcluster.controlplane.emulated.serving.params import parse_json
from localcluster.controlplane.emulated.serving.streams import dumps


def reference(raw: bytes) -> object:
    """What the standard parser makes of ``raw``, with the server's hooks."""
    return json.loads(
        raw, parse_float=JSONFloat, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c))
    )


def same(a: object, b: object) -> bool:
    """Equal values of equal types all the way down (1 and 1.0 differ; a kept float's text
    counts)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # type: ignore[index]  # b is a dict too
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]  # b is a list too
    if isinstance(a, JSONFloat):
        return str(a) == str(b)
    return a == b


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=5), st.booleans())
def test_bodies_parse_as_the_standard_parser_reads_them(obj, ascii_only):
    raw = json.dumps(obj, ensure_ascii=ascii_only).encode()
    assert same(parse_json(raw), reference(raw))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"cpu": 0.5, "n": 1}',
        b'{"big": 123456789012345678901234567890}',
        b'{"neg": -9223372036854775809}',
        b"[1e3, 2E-2]",
        b'{"text": "a: 1.5 inside a string", "n": 2}',
        b'{"a": "\\ud800"}',
        b'\xef\xbb\xbf{"bom": 1}',
        b' {"a": 1, "a": 2}',
    ],
)
def test_the_cases_orjson_would_read_otherwise(raw):
    assert same(parse_json(raw), reference(raw))


@pytest.mark.parametrize("raw", [b'{"a": NaN}', b'{"a": 1e400}', b'{"a": }', b"[1, 2", b"\xff"])
def test_malformed_bodies_get_the_standard_parsers_400(raw):
    with pytest.raises(StatusError) as err:
        parse_json(raw)
    assert err.value.code == 400
    assert "could not be decoded as JSON" in err.value.status["message"]


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_replies_encode_to_the_same_json(value):
    assert json.loads(dumps(value)) == json.loads(json.dumps(value))
