"""Decoding kubectl's protobuf bodies (runtime.Unknown envelope + typed message), and
refusing malformed ones with kube-apiserver's 400 and Go's reasons, never a crash (a 500)."""

from __future__ import annotations

import time

import pytest

from localcluster.controlplane.emulated import StatusError
from localcluster.controlplane.emulated.serving import params
from localcluster.controlplane.emulated.serving.httpcore import Request
from localcluster.controlplane.emulated.serving.protobuf import CONTENT_TYPE, decode
from support.protobuf_wire import envelope, field


def test_decode_configmap_as_kubectl_sends_it():
    meta = (
        field(1, "c")
        + field(2, "")
        + field(3, "")
        + field(7, 0)
        + field(8, b"")
        + field(11, field(1, "app") + field(2, "x"))
    )
    raw = (
        field(1, meta)
        + field(2, field(1, "a") + field(2, "b"))
        + field(2, field(1, "e") + field(2, ""))
        + field(3, field(1, "bin") + field(2, b"\x00\x01"))
    )
    obj = decode(envelope("v1", "ConfigMap", raw), "ConfigMap")
    assert obj == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"app": "x"}},
        "data": {"a": "b", "e": ""},
        "binaryData": {"bin": "AAE="},
    }


def test_decode_rolebinding_nested_messages():
    raw = (
        field(1, field(1, "rb"))
        + field(2, field(1, "User") + field(3, "bob"))
        + field(3, field(1, "rbac.authorization.k8s.io") + field(2, "Role") + field(3, "r"))
    )
    obj = decode(envelope("rbac.authorization.k8s.io/v1", "RoleBinding", raw), "ConfigMap")
    assert obj["subjects"] == [{"kind": "User", "name": "bob"}]
    assert obj["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}


def post(body: bytes, kind: str = "ConfigMap") -> StatusError:
    req = Request("POST", "/", {}, {"content-type": CONTENT_TYPE}, body)
    with pytest.raises(StatusError) as e:
        params.object_body(req, kind)
    return e.value


def test_a_kind_without_a_table_is_415():
    err = post(envelope("apps/v1", "DaemonSet", b""), "DaemonSet")
    assert err.code == 415


CM = 'ConfigMap in version "v1" cannot be handled as a ConfigMap: '


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b"{}",
            "the object provided is unrecognized (must be of type ConfigMap): provided data "
            "does not appear to be a protobuf message, expected prefix [107 56 115 0] ({})",
        ),
        (
            b"k8s\x00",
            "the object provided is unrecognized (must be of type ConfigMap): empty body "
            "(6b387300)",
        ),
        (
            b"k8s\x00\x0a\xff",
            "the object provided is unrecognized (must be of type ConfigMap): "
            "unexpected EOF (6b3873000aff)",
        ),
        (
            b"k8s\x00\x08\x01",
            "the object provided is unrecognized (must be of type ConfigMap): "
            "proto: wrong wireType = 0 for field TypeMeta (6b3873000801)",
        ),
        # a varint where a message, a string or a map belongs, and a string for an integer
        (
            envelope("v1", "ConfigMap", field(1, 5)),
            CM + "proto: wrong wireType = 0 for field ObjectMeta",
        ),
        (
            envelope("v1", "ConfigMap", field(1, field(1, 5))),
            CM + "proto: wrong wireType = 0 for field Name",
        ),
        (envelope("v1", "ConfigMap", field(2, 5)), CM + "proto: wrong wireType = 0 for field Data"),
        (
            envelope("v1", "ConfigMap", field(1, field(7, "x"))),
            CM + "proto: wrong wireType = 2 for field Generation",
        ),
        # truncated: a varint, a length, a value shorter than its length
        (envelope("v1", "ConfigMap", b"\x38\x80"), CM + "unexpected EOF"),
        (envelope("v1", "ConfigMap", b"\x0a"), CM + "unexpected EOF"),
        (envelope("v1", "ConfigMap", b"\x0a\x05ab"), CM + "unexpected EOF"),
        (
            envelope("v1", "ConfigMap", b"\x0a" + b"\xff" * 9 + b"\x01"),
            CM + "proto: negative length found during unmarshal",
        ),
        (
            envelope("v1", "ConfigMap", b"\x38" + b"\xff" * 10 + b"\x01"),
            CM + "proto: integer overflow",
        ),
        (
            envelope("v1", "ConfigMap", b"\x00"),
            CM + "proto: ConfigMap: illegal tag 0 (wire type 0)",
        ),
        (
            envelope("v1", "ConfigMap", b"\x0c"),
            CM + "proto: ConfigMap: wiretype end group for non-group",
        ),
        (
            envelope("v1", "ConfigMap", field(1, b"\x0c")),
            CM + "proto: ObjectMeta: wiretype end group for non-group",
        ),
        # unknown fields are skipped by their wire type; one that has none is refused
        (envelope("v1", "ConfigMap", b"\x7e"), CM + "proto: illegal wireType 6"),
        (envelope("v1", "ConfigMap", b"\x79\x01"), CM + "unexpected EOF"),
        (envelope("v1", "ConfigMap", b"\x7b\x08\x01"), CM + "unexpected EOF"),
        (
            envelope("v1", "ConfigMap", b"\x7b\x7c\x7c"),  # one group, then an end too many
            CM + "proto: ConfigMap: wiretype end group for non-group",
        ),
        (
            envelope("apps/v1", "Deployment", field(2, field(1, "x"))),
            "Deployment in version "
            '"v1" cannot be handled as a ConfigMap: proto: wrong wireType = 2 for field Replicas',
        ),
    ],
)
def test_malformed_bodies_get_kube_apiservers_400(body, message):
    err = post(body)
    assert (err.code, err.reason, err.message) == (400, "BadRequest", message)


def test_what_go_reads_is_read():
    """Unknown fields of any wire type, groups among them, are skipped; strings are not
    checked for UTF-8 (Go writes them to JSON with U+FFFD); a missing kind is the URL's."""
    unknown = b"\x78\x01" + b"\x79" + b"\x00" * 8 + b"\x7d" + b"\x00" * 4 + b"\x7b\x08\x01\x7c"
    body = b"k8s\x00" + field(2, unknown + field(1, field(1, b"a\xff")))
    req = Request("POST", "/", {}, {"content-type": CONTENT_TYPE}, body)
    obj = params.object_body(req, "ConfigMap")
    assert obj == {"apiVersion": "", "kind": "ConfigMap", "metadata": {"name": "a\ufffd"}}


def test_a_long_varint_costs_one_pass():
    started = time.monotonic()
    err = post(envelope("v1", "ConfigMap", b"\x38" + b"\xff" * 3_000_000))
    assert err.message == CM + "proto: integer overflow"
    assert time.monotonic() - started < 1
