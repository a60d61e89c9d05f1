"""Decoding kubectl's protobuf bodies (runtime.Unknown envelope + typed message)."""

from __future__ import annotations

import pytest

from localcluster.apiserver import StatusError
from localcluster.apiserver.protobuf import decode


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(num << 3 | 2) + _varint(len(data)) + data


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return b"k8s\x00" + field(1, field(1, api_version) + field(2, kind)) + field(2, raw)


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
    obj = decode(envelope("v1", "ConfigMap", raw))
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
    obj = decode(envelope("rbac.authorization.k8s.io/v1", "RoleBinding", raw))
    assert obj["subjects"] == [{"kind": "User", "name": "bob"}]
    assert obj["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}


def test_unsupported_kind_and_garbage():
    with pytest.raises(StatusError) as e:
        decode(envelope("apps/v1", "DaemonSet", b""))
    assert e.value.code == 415
    with pytest.raises(StatusError) as e:
        decode(b"k8s\x00\x0a\xff")
    assert e.value.code == 400
    with pytest.raises(StatusError) as e:
        decode(b"{}")
    assert e.value.code == 400
