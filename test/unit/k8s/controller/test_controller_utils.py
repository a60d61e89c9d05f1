"""Object keys, tombstones, the deletion re-check before adoption, API groups."""

import pytest

from tf_operator.k8s.cache import DeletedFinalStateUnknown
from tf_operator.k8s.controller.controller_utils import (
    group_of,
    object_key,
    recheck_deletion_timestamp,
    unwrap_tombstone,
)


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
