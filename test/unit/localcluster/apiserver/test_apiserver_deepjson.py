"""JSON bodies nested as deep as kube-apiserver takes them (10,000 levels, Go's encoding/json
limit) and refused past that, or when malformed, with Go's scanner's verdict and message; the
fast codecs stay in front, so only bodies they refuse reach the slow path."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localcluster.apimachinery import deepjson
from localcluster.apimachinery.objects import clone, deeper_than, detach, equal, nesting_depth
from localcluster.apimachinery.quantity import JSONFloat
from localcluster.controlplane.emulated import StatusError
from localcluster.controlplane.emulated.serving import params
from localcluster.controlplane.emulated.serving.httpcore import Request
from localcluster.controlplane.emulated.serving.streams import dumps

FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None)


def nested(depth: int, opening: str = "[") -> bytes:
    """``depth`` arrays (or objects) inside each other."""
    if opening == "[":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


@pytest.mark.parametrize("opening", ["[", "{"])
def test_the_depth_limit_is_go_encoding_jsons(opening):
    assert nesting_depth(deepjson.loads(nested(10_000, opening))) == 10_000
    with pytest.raises(deepjson.TooDeep) as e:
        deepjson.loads(nested(10_001, opening))
    assert str(e.value) == f"invalid character '{opening}' exceeded max depth"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"", "unexpected end of JSON input"),
        (b"[1,", "unexpected end of JSON input"),
        (b'{"a"', "unexpected end of JSON input"),
        (b"[1,]", "invalid character ']' looking for beginning of value"),
        (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
        (b'{"a" 1}', "invalid character '1' after object key"),
        (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
        (b"[1 2]", "invalid character '2' after array element"),
        (b"[01]", "invalid character '1' after array element"),
        (b"1.5.", "invalid character '.' after top-level value"),
        (b"tru", "invalid character ' ' in literal true (expecting 'e')"),
        (b"nulx", "invalid character 'x' in literal null (expecting 'l')"),
        (b"-x", "invalid character 'x' in numeric literal"),
        (b"1.x", "invalid character 'x' after decimal point in numeric literal"),
        (b"1e+", "invalid character ' ' in exponent of numeric literal"),
        (b'"a\x01"', "invalid character '\\x01' in string literal"),
        (b'"\\x"', "invalid character 'x' in string escape code"),
        (b'"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"),
        (b"NaN", "invalid character 'N' looking for beginning of value"),
        (b"'", "invalid character '\\'' looking for beginning of value"),
        (b"\xff", "invalid character '\u00ff' looking for beginning of value"),
        (b"\xc2\xa0", "invalid character '\u00c2' looking for beginning of value"),
        (b"\x7f", "invalid character '\\x7f' looking for beginning of value"),
    ],
)
def test_malformed_text_gets_go_scanners_message(text, message):
    with pytest.raises(deepjson.JSONSyntaxError) as e:
        deepjson.loads(text)
    assert str(e.value) == message


def test_values_read_as_the_server_reads_them():
    text = b' {"a": [1, -2.50, {"b": null}], "c": "\\u00e9\\n", "d": 1e3, "a": true} '
    value = deepjson.loads(text, JSONFloat)
    assert value == {"a": True, "c": "é\n", "d": 1000.0}
    assert deepjson.loads(b'"\xff"') == "\ufffd"  # Go reads invalid UTF-8 as U+FFFD
    assert deepjson.loads(b"123456789012345678901234567890") == 123456789012345678901234567890


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=25,
)


@FUZZ
@given(JSON_VALUES, st.booleans())
def test_it_reads_what_the_standard_parser_reads(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert deepjson.loads(text) == json.loads(text)
    assert json.loads(deepjson.dumps(value)) == json.loads(text)


@FUZZ
@given(JSON_VALUES, st.integers(0, 10_000), st.sampled_from(list(b'{}[],:"\\ 0-.eEtnx')))
def test_it_refuses_what_the_standard_parser_refuses(value, at, byte):
    text = bytearray(json.dumps(value).encode())
    text[at % len(text)] = byte
    try:
        expected: object = json.loads(
            text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c))
        )
    except ValueError:
        with pytest.raises(deepjson.JSONSyntaxError):
            deepjson.loads(bytes(text))
    else:
        assert deepjson.loads(bytes(text)) == expected


# ---- the request path: fast codecs first, this one behind them


def _post(body: bytes, kind: str = "ConfigMap") -> object:
    req = Request("POST", "/", {}, {"content-type": "application/json"}, body)
    return params.object_body(req, kind)


def _deep_configmap(levels: int) -> bytes:
    """A ConfigMap whose ``x`` makes the whole body ``levels`` deep."""
    return b'{"apiVersion":"v1","kind":"ConfigMap","x":' + nested(levels - 1) + b"}"


def test_a_body_as_deep_as_kube_apiserver_takes_is_decoded():
    body = _post(_deep_configmap(10_000))
    assert nesting_depth(body) == 10_000


def test_a_deeper_body_is_kube_apiservers_400():
    with pytest.raises(StatusError) as e:
        _post(_deep_configmap(10_001))
    assert (e.value.code, e.value.reason) == (400, "BadRequest")
    assert e.value.message == (
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character '[' exceeded max depth "
        '({"apiVersion":"v1","kind":"Con ...)'
    )


def test_malformed_bodies_get_go_scanners_message_as_the_server_words_it():
    with pytest.raises(StatusError) as e:
        _post(b'{"metadata": }', "Pod")
    assert e.value.message == (
        "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; "
        "json parse error: invalid character '}' looking for beginning of value "
        '({"metadata": })'
    )
    with pytest.raises(StatusError) as e:
        _post(b"[1, 2")
    assert e.value.message.endswith("json parse error: unexpected end of JSON input (5b312c2032)")


def test_copies_comparisons_and_encoding_take_any_depth():
    deep = deepjson.loads(nested(10_000, "{"))
    copy = clone(deep)
    assert copy is not deep and equal(copy, deep) and equal(detach(deep), deep)
    changed = clone(deep)
    inner = changed
    while inner["a"]:
        inner = inner["a"]
    inner["b"] = 1
    assert not equal(changed, deep)
    assert equal(deepjson.loads(dumps(deep)), deep)
    assert dumps(deep) == nested(10_000, "{")
    assert deeper_than(deep, 9_999) and not deeper_than(deep, 10_000)
    assert not deeper_than({"a": [1]}, 254) and deeper_than({"a": [1]}, 1)


def test_deep_copies_keep_the_order_of_keys():
    deep: dict[str, object] = {"z": 1, "a": 2}
    for _ in range(3000):
        deep = {"first": 1, "next": deep, "last": 2}
    copy = clone(deep)
    while isinstance(copy, dict) and "next" in copy:
        assert list(copy) == ["first", "next", "last"]
        copy = copy["next"]  # type: ignore[assignment]  # walking the copy down
    assert list(copy) == ["z", "a"]
