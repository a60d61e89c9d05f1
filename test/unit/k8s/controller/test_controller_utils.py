"""Object keys, tombstones, the deletion re-check before adoption, API groups."""

import pytest

from tf_operator.k8s.cache import DeletedFinalStateUnknown, new_indexer
from tf_operator.k8s.controller.controller_utils import (
    ControllerRefResolver,
    group_of,
    object_key,
    recheck_deletion_timestamp,
    unwrap_tombstone,
)
from tf_operator.k8s.listers import Lister


def test_object_key_and_group():
    assert object_key({"metadata": {"namespace": "ns", "name": "j"}}) == "ns/j"
    assert object_key({"metadata": {"name": "cluster-scoped"}}) == "cluster-scoped"
    assert group_of("kubeflow.org/v1") == "kubeflow.org" and group_of("v1") == ""


def test_unwrap_tombstone():
    pod = {"metadata": {"name": "p"}}
    assert unwrap_tombstone(pod) is pod
    assert unwrap_tombstone(DeletedFinalStateUnknown("ns/p", pod)) is pod
    assert unwrap_tombstone(DeletedFinalStateUnknown("ns/p", None)) is None


def test_recheck_deletion_timestamp():
    recheck_deletion_timestamp(lambda: {"metadata": {"name": "j"}})()
    with pytest.raises(RuntimeError, match="has just been deleted"):
        recheck_deletion_timestamp(
            lambda: {"metadata": {"name": "j", "deletionTimestamp": "2020-01-01T00:00:00Z"}}
        )()

    def gone():
        raise LookupError("404")

    with pytest.raises(RuntimeError, match="can't recheck DeletionTimestamp"):
        recheck_deletion_timestamp(gone)()


def test_controller_ref_resolves_only_kind_group_and_uid_matches():
    owners = new_indexer()
    owners.add({"metadata": {"namespace": "ns", "name": "j", "uid": "u1"}})
    resolver = ControllerRefResolver("TFJob", "kubeflow.org", Lister(owners))

    def child(**ref):
        ref = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "j", "uid": "u1", **ref}
        return {"metadata": {"namespace": "ns", "ownerReferences": [{**ref, "controller": True}]}}

    assert resolver.owner_key(child()) == "ns/j"
    assert resolver.owner_key(child(apiVersion="other.io/v1")) is None
    assert resolver.owner_key(child(kind="Job")) is None
    assert resolver.owner_key(child(uid="u2")) is None
    assert resolver.owner_key(child(name="gone")) is None
    assert resolver.owner_key({"metadata": {"namespace": "ns"}}) is None
