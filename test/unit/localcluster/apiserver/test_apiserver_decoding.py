"""Typed decoding of ConfigMaps and Secrets (400 before validation, as kube-apiserver), and
base64 judged as Go's encoding/base64 judges it (cases recorded from Go 1.19's decoder)."""

from __future__ import annotations

import pytest

from localcluster.apimachinery import gobase64
from localcluster.controlplane.emulated import Registry, StatusError

CM = ("", "v1", "configmaps")
SECRETS = ("", "v1", "secrets")


@pytest.fixture
def reg():
    r = Registry()
    yield r
    r.stop()


def refusal(reg, gvr, body) -> str:
    with pytest.raises(StatusError) as info:
        reg.create(gvr, "default", {"metadata": {"name": "x"}, **body})
    assert info.value.code == 400
    return info.value.message


UNMARSHAL = "json: cannot unmarshal {} into Go struct field ConfigMap.{} of type {}"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ({"data": {"a": 1}}, UNMARSHAL.format("number", "data", "string")),
        ({"data": "a"}, UNMARSHAL.format("string", "data", "map[string]string")),
        ({"binaryData": {"a": "%%"}}, "illegal base64 data at input byte 0"),
        ({"immutable": "yes"}, UNMARSHAL.format("string", "immutable", "bool")),
    ],
)
def test_configmaps_decode_as_go_structs(reg, body, why):
    assert refusal(reg, CM, body) == (
        f'ConfigMap in version "v1" cannot be handled as a ConfigMap: {why}'
    )


def test_secret_data_is_base64_and_string_data_plain_text(reg):
    assert refusal(reg, SECRETS, {"data": {"k": "aGVsbG8"}}).endswith(
        "illegal base64 data at input byte 4"
    )
    assert "Secret.type of type v1.SecretType" in refusal(reg, SECRETS, {"type": 7})
    stored = reg.create(
        SECRETS,
        "default",
        {"metadata": {"name": "ok"}, "data": {"k": "aGVs\nbG8="}, "stringData": {"s": "%%"}},
    )
    # stored as Go encodes the bytes again, stringData written into data and not kept (as
    # kube-apiserver answers)
    assert stored["data"] == {"k": "aGVsbG8=", "s": "JSU="}
    assert "stringData" not in stored


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("aGVsbG8=", None),
        ("aGVsbG8", 4),  # a quantum cut short
        ("aGV$bG8=", 3),
        ("a", 0),
        ("ab", 0),
        ("abcd", None),
        ("ab==", None),
        ("ab=c", 2),
        ("aGVs\nbG8=", None),  # line breaks are skipped
        ("====", 0),
        ("", None),
        ("YQ==YQ==", 4),  # anything after the padding
    ],
)
def test_base64_errors_point_where_gos_do(text, at):
    assert gobase64.corrupt_at(text) == at


def test_raw_url_base64_takes_no_padding():
    assert gobase64.decode("eyJ2IjoxfQ", url=True, padded=False) == b'{"v":1}'
    with pytest.raises(gobase64.CorruptInput, match="input byte 10"):
        gobase64.decode("eyJ2IjoxfQ==", url=True, padded=False)


def test_type_meta_must_be_strings(reg):
    assert refusal(reg, CM, {"apiVersion": 5}) == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: couldn\'t get '
        "version/kind; json parse error: json: cannot unmarshal number into Go struct field "
        ".apiVersion of type string"
    )
    assert "field .kind of type string" in refusal(reg, CM, {"kind": ["ConfigMap"]})


PODS = ("", "v1", "pods")
POD_UNMARSHAL = 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal {}'


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ({"containers": {}}, "object into Go struct field PodSpec.spec.containers of type []v1.Container"),
        ({"initContainers": ["c"]}, "string into Go struct field PodSpec.spec.initContainers of type v1.Container"),
        ({"containers": [{"name": "c", "ports": 80}]}, "number into Go struct field Container.spec.containers.ports of type []v1.ContainerPort"),
        ({"containers": [{"name": "c", "ports": [80]}]}, "number into Go struct field Container.spec.containers.ports of type v1.ContainerPort"),
    ],
)  # fmt: skip
def test_containers_and_their_ports_decode_as_go_slices(reg, spec, why):
    assert refusal(reg, PODS, {"spec": spec}) == POD_UNMARSHAL.format(why)


def test_null_containers_and_ports_decode_as_empty_slices(reg):
    spec = {"initContainers": None, "containers": [{"name": "c", "image": "i", "ports": None}]}
    reg.create(PODS, "default", {"metadata": {"name": "p"}, "spec": spec})


def test_null_metadata_fields_are_stored_as_left_out(reg):
    """Go decodes null into a zero value and these fields are omitempty (kube-apiserver
    answers 201 and stores no such key); the caller's body is not changed."""
    nulls = ("labels", "annotations", "finalizers", "ownerReferences", "generateName")
    body = {"metadata": {"name": "n", **dict.fromkeys(nulls)}, "data": None}
    stored = reg.create(CM, "default", body)
    assert not set(nulls) & set(stored["metadata"]) and "data" not in stored
    assert body["metadata"]["labels"] is None and body["data"] is None


@pytest.mark.parametrize(
    ("metadata", "why"),
    [
        ({"finalizers": "a"}, "string into Go struct field ObjectMeta.metadata.finalizers of type []string"),
        ({"finalizers": ["a", 1]}, "number into Go struct field ObjectMeta.metadata.finalizers of type string"),
        ({"ownerReferences": {}}, "object into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference"),
        ({"ownerReferences": ["x"]}, "string into Go struct field ObjectMeta.metadata.ownerReferences of type v1.OwnerReference"),
    ],
)  # fmt: skip
def test_metadata_lists_decode_as_go_slices(reg, metadata, why):
    body = {"metadata": {"name": "x", **metadata}}
    with pytest.raises(StatusError) as info:
        reg.create(CM, "default", body)
    assert info.value.code == 400
    assert info.value.message.endswith(f"json: cannot unmarshal {why}")
