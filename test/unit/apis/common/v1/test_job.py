"""What every kind's job type shares (``tf_operator/apis/common/v1/job.py``): the same
accessors, encoding and decoding, for a TFJob as for a PyTorchJob."""

import pytest

from tf_operator.apis.common.v1.fields import DecodeError
from tf_operator.apis.pytorch.v1.types import PyTorchJob
from tf_operator.apis.tensorflow.v1.types import TFJob

KINDS = [
    pytest.param(TFJob, "TFJob", "tfReplicaSpecs", id="tfjob"),
    pytest.param(PyTorchJob, "PyTorchJob", "pytorchReplicaSpecs", id="pytorchjob"),
]
META = {"name": "j", "namespace": "ns", "uid": "u-1", "resourceVersion": "7", "labels": {"a": "b"}}


@pytest.mark.parametrize("cls, kind, specs", KINDS)
def test_the_accessors_read_the_metadata(cls, kind, specs):
    job = cls.from_dict({"metadata": META, "spec": {specs: {}}})
    assert (job.name, job.namespace, job.uid, job.deletion_timestamp) == ("j", "ns", "u-1", "")
    assert job.object_ref() == {
        "apiVersion": "kubeflow.org/v1",
        "kind": kind,
        "metadata": {"name": "j", "namespace": "ns", "uid": "u-1", "resourceVersion": "7"},
    }
    deleted = cls.from_dict({"metadata": {**META, "deletionTimestamp": "2026-01-01T00:00:00Z"}})
    assert deleted.deletion_timestamp == "2026-01-01T00:00:00Z"
    assert (cls.from_dict({}).name, cls.from_dict({"metadata": {"name": 3}}).name) == ("", "")


@pytest.mark.parametrize("cls, kind, specs", KINDS)
def test_the_envelope_round_trips_and_copies(cls, kind, specs):
    raw = {
        "apiVersion": "kubeflow.org/v1",
        "kind": kind,
        "metadata": META,
        "spec": {specs: None, "runPolicy": {"suspend": True}},
        "status": {"conditions": [], "custom": 1},
        "unknownTopLevel": {"kept": True},
    }
    job = cls.from_dict(raw)
    encoded = job.to_dict()
    assert encoded["unknownTopLevel"] == {"kept": True}
    assert encoded == cls.from_dict(encoded).to_dict()
    assert {k: encoded[k] for k in ("apiVersion", "kind", "metadata")} == {
        "apiVersion": "kubeflow.org/v1",
        "kind": kind,
        "metadata": META,
    }
    copied = job.deep_copy()
    assert type(copied) is cls and copied == job
    copied.metadata["labels"]["a"] = "c"
    assert job.metadata["labels"] == {"a": "b"}


@pytest.mark.parametrize("cls, kind, specs", KINDS)
def test_the_first_malformed_part_is_named(cls, kind, specs):
    with pytest.raises(DecodeError, match=f"^{kind}: expected an object"):
        cls.from_dict([])
    with pytest.raises(DecodeError, match="^metadata: expected an object"):
        cls.from_dict({"metadata": 1, "spec": 1})
    with pytest.raises(DecodeError, match="^spec: expected an object"):
        cls.from_dict({"spec": 1, "status": 1})
    with pytest.raises(DecodeError, match=f"^{kind}.apiVersion: expected a string"):
        cls.from_dict({"apiVersion": 1})


@pytest.mark.parametrize("cls, kind, specs", KINDS)
def test_the_replica_specs_map_round_trips_nulls_and_names_its_errors(cls, kind, specs):
    """Both kinds decode and encode their replica specs the same way (``decode_replica_specs``):
    an absent map is written null, a null entry stays null, errors name the kind's field."""
    assert cls.from_dict({"spec": {}}).to_dict()["spec"][specs] is None
    raw = {"spec": {specs: {"Worker": None, "Other": {"replicas": 2}}}}
    written = cls.from_dict(raw).to_dict()["spec"][specs]
    assert written["Worker"] is None and written["Other"]["replicas"] == 2
    with pytest.raises(DecodeError, match=f"^spec.{specs}: expected an object"):
        cls.from_dict({"spec": {specs: []}})
    with pytest.raises(DecodeError, match=f"^spec.{specs}.Other.replicas: expected an integer"):
        cls.from_dict({"spec": {specs: {"Other": {"replicas": "two"}}}})


@pytest.mark.parametrize(
    "cls, specs, order",
    [
        pytest.param(TFJob, "tfReplicaSpecs", ["PS", "Worker", "Chief"], id="tfjob"),
        pytest.param(PyTorchJob, "pytorchReplicaSpecs", ["Master", "Worker"], id="pytorchjob"),
    ],
)
def test_replica_specs_come_in_the_kinds_order_then_others_sorted(cls, specs, order):
    """``in_kind_order``: the kind's known types first in its order, unknown ones sorted after,
    null specs left out."""
    written = ["Zeta", *reversed(order), "Alpha"]
    job = cls.from_dict({"spec": {specs: {**{t: {} for t in written}, "Null": None}}})
    assert list(job.replica_specs()) == [*order, "Alpha", "Zeta"]
