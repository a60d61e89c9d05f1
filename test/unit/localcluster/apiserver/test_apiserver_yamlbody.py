"""YAML request bodies read as kube-apiserver reads them (sigs.k8s.io/yaml over go-yaml v2):
aliases bounded by go-yaml's ratio (issue 27's leftover: a 638-byte alias bomb took gigabytes),
go-yaml's scalars, merge keys and depth limits, and the server's 400 wording for each."""

from __future__ import annotations

import time

import pytest

from localcluster.apimachinery import deepjson
from localcluster.controlplane.emulated import StatusError
from localcluster.controlplane.emulated.serving import params
from localcluster.controlplane.emulated.serving.httpcore import Request
from localcluster.controlplane.emulated.serving.yamlbody import YAMLBodyError, load
from support.yaml_alias_vectors import ALIAS_VECTORS, LAUGHS, AliasVector


@pytest.mark.parametrize("vector", ALIAS_VECTORS, ids=lambda v: v.name)
def test_the_alias_vectors_shared_with_the_operators_reader(vector: AliasVector):
    """tf_operator.k8s.safeyaml (a size cap) classifies these alike."""
    if vector.refused:
        with pytest.raises(YAMLBodyError):
            load(vector.document.encode())
    else:
        load(vector.document.encode())


def test_a_billion_laughs_stops_at_once_with_go_yamls_message():
    started = time.monotonic()
    with pytest.raises(YAMLBodyError) as e:
        load(LAUGHS.encode())
    assert str(e.value) == "yaml: document contains excessive aliasing"
    assert time.monotonic() - started < 1.0


def _copies(copies: int, width: int = 1000) -> bytes:
    return f"a: &a [{', '.join(['x'] * width)}]\nb: [{', '.join(['*a'] * copies)}]\n".encode()


def test_the_bound_is_go_yamls_ratio_counted_as_it_decodes():
    # 1,006 values of its own and n copies of 1,001 through an alias: aliased values may make
    # up 99% of the decode operations, which 110 copies stay under and 111 exceed
    assert len(load(_copies(110))["b"]) == 110
    with pytest.raises(YAMLBodyError, match="excessive aliasing"):
        load(_copies(111))
    # below 1,000 operations or 100 aliased ones, anything goes
    assert len(load(_copies(90, width=10))["b"]) == 90


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("a: &x [1, *x]", "yaml: anchor 'x' value contains itself"),
        ("a: *nowhere", "yaml: unknown anchor 'nowhere' referenced"),
        ("a: [", "yaml: line 1: did not find expected node content"),
        ("a: b: c", "yaml: mapping values are not allowed in this context"),
        ("a:\n  b: 1\n c: 2\n", "yaml: line 2: did not find expected key"),
        ("<<: 1", "yaml: map merge requires map or sequence of maps as the value"),
        ("a: !!binary '%%%'", "yaml: !!binary value contains invalid base64 data"),
        ("a: !!int abc", "yaml: cannot decode !!str `abc` as a !!int"),
        ("? [1, a, ~]\n: x", 'yaml: invalid map key: []interface {}{1, "a", interface {}(nil)}'),
        ("? {a: 1.5}\n: x", 'yaml: invalid map key: map[interface {}]interface {}{"a":1.5}'),
        ("a: .inf", "json: unsupported value: +Inf"),
        ("a: [-.inf]", "json: unsupported value: -Inf"),
        ("a: .nan", "json: unsupported value: NaN"),
        ("~: x", 'unsupported map key of type: %!s(<nil>), key: <nil>, value: "x"'),
        (
            "18446744073709551615: [1e6, .inf]",
            "unsupported map key of type: uint64, key: 0xffffffffffffffff, value: "
            "[]interface {}{1e+06, +Inf}",
        ),
        # go-yaml decodes the whole document before sigs.k8s.io/yaml converts its keys
        ("~: x\nb: !!int abc", "yaml: cannot decode !!str `abc` as a !!int"),
    ],
)
def test_refusals_carry_the_decoders_messages(document, message):
    with pytest.raises(YAMLBodyError) as e:
        load(document.encode())
    assert str(e.value) == message


def test_scalars_resolve_as_go_yaml_v2_resolves_them():
    doc = load(
        b"a: yes\nb: n\nc: 0x1f\nd: 017\ne: 0o17\nf: 1e3\ng: 1:30\nh: 2020-01-01T00:00:00Z\n"
        b"i: !!binary aGVsbG8=\nj: '1'\nk: ~\nl: 12345678901234567890123\nm: -0b101\n"
        b"o: +12\np: .5\nq: 1_000\nr: !!float 3\ns: !custom text\nt:\nu: 1e400\nv: .5e400\n"
    )
    assert doc == {
        "a": True,
        "b": False,
        "c": 31,
        "d": 15,
        "e": 15,
        "f": 1000.0,
        "g": "1:30",  # no base-60 numbers
        "h": "2020-01-01T00:00:00Z",  # a timestamp stays text
        "i": "hello",
        "j": "1",
        "k": None,
        "l": 1.2345678901234568e22,  # beyond 64 bits: a float
        "m": -5,
        "o": 12,
        "p": 0.5,
        "q": 1000,
        "r": 3.0,
        "s": "text",
        "t": None,
        "u": "1e400",  # out of float range: text
        "v": ".5e400",
    }


def test_keys_become_strings_as_sigs_yaml_makes_them():
    assert load(b"1: a\n1.5: b\ntrue: c\n0.1: d\n1e7: e\n") == {
        "1": "a",
        "1.5": "b",
        "true": "c",
        "0.1": "d",
        "1e+07": "e",
    }


def test_merge_keys_write_over_what_the_mapping_set_before_them():
    doc = load(
        b"d: &d {a: 1, b: 2}\n"
        b"e:\n  a: 0\n  <<: *d\n  c: 3\n"
        b"f:\n  <<: [*d, {b: 9, z: 1}]\n"
        b"g: !!set {x, y}\n"
    )
    assert doc["e"] == {"a": 1, "b": 2, "c": 3}  # go-yaml v2: the merge comes later, it wins
    assert doc["f"] == {"a": 1, "b": 2, "z": 1}  # in a list, the earlier mapping wins
    assert doc["g"] == {"x": None, "true": None}  # tags on collections are ignored; y is true


def test_only_the_first_document_is_read():
    assert load(b"a: 1\n---\nb: 2\n---\n: : :[") == {"a": 1}
    assert load(b"") is None
    assert load(b"# nothing\n") is None


def test_depth_through_aliases_is_bounded_by_the_json_decoder_after_go_yaml():
    level = "[" * 998 + "{}" + "]" * 998
    lines = [f"l0: &l0 {level}"]
    lines += [f"l{i}: &l{i} {level.replace('{}', f'*l{i - 1}')}" for i in range(1, 11)]
    with pytest.raises(deepjson.JSONSyntaxError) as e:
        load("\n".join(lines).encode())
    assert str(e.value) == "invalid character '[' exceeded max depth"


def test_yaml_nested_beyond_libyamls_limit_is_refused_not_a_crash():
    """D73: YAML that is not JSON text is read by libyaml, which stops at 1,000 levels."""
    with pytest.raises(YAMLBodyError, match="exceeded maximum nesting depth"):
        load(b"a: " + b"[" * 1001 + b"]" * 1001)
    block = b"".join(b"  " * i + b"a:\n" for i in range(1200)) + b"  " * 1200 + b"1\n"
    with pytest.raises(YAMLBodyError, match="exceeded maximum nesting depth"):
        load(block)


# ---- what the server answers


def _post(body: bytes, kind: str = "ConfigMap") -> StatusError:
    req = Request("POST", "/", {}, {"content-type": "application/yaml"}, body)
    with pytest.raises(StatusError) as e:
        params.object_body(req, kind)
    return e.value


def _apply(body: bytes) -> StatusError:
    req = Request("PATCH", "/", {}, {"content-type": "application/apply-patch+yaml"}, body)
    with pytest.raises(StatusError) as e:
        params.patch_body(req)
    return e.value


def test_an_alias_bomb_is_kube_apiservers_400():
    body = f"metadata:\n  name: bomb\ndata:\n  {LAUGHS.replace(chr(10), chr(10) + '  ')}\n"
    err = _post(body.encode())
    assert (err.code, err.reason) == (400, "BadRequest")
    assert err.message == (
        "the object provided is unrecognized (must be of type ConfigMap): yaml: document "
        f"contains excessive aliasing ({body.encode()[:30].hex()} ...)"
    )
    err = _apply(body.encode())
    assert (err.code, err.message) == (
        400,
        "error decoding YAML: error converting YAML to JSON: yaml: document contains "
        "excessive aliasing",
    )


def test_json_text_as_yaml_is_read_to_go_yamls_depth():
    def nested(depth: int) -> bytes:
        return b'{"metadata":{"name":"n"},"x":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"

    req = Request("POST", "/", {}, {"content-type": "application/yaml"}, nested(10_000))
    assert params.object_body(req, "ConfigMap")["metadata"] == {"name": "n"}
    err = _post(nested(10_001))
    assert err.message == (
        "the object provided is unrecognized (must be of type ConfigMap): yaml: exceeded max "
        f"depth of 10000 ({nested(10_001)[:30].decode()} ...)"  # an object is quoted as text
    )
    err = _apply(nested(10_001).replace(b",", b",\n", 1))
    assert err.message == (
        "error decoding YAML: error converting YAML to JSON: yaml: line 2: exceeded max depth "
        "of 10000"
    )
