"""Resource locks: storage format and optimistic concurrency."""

import json
from datetime import UTC, datetime

import pytest

from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.k8s.client import ENDPOINTS, LEASES, ApiError, is_conflict, is_not_found
from tf_operator.k8s.leaderelection import (
    LEADER_ANNOTATION,
    ConfigMapLock,
    EndpointsLock,
    LeaderElectionRecord,
    LeaseLock,
    new_lock,
)

T0 = datetime(2026, 11, 21, 20, 58, 40, 923013, tzinfo=UTC)


def record(holder="me", transitions=0):
    return LeaderElectionRecord(holder, 15, T0, T0, transitions)


def test_endpoints_lock_stores_record_as_annotation_json():
    kube = FakeKubeClient()
    lock = EndpointsLock(kube, "default", "tf-operator", "me")
    with pytest.raises(ApiError) as err:
        lock.get()
    assert is_not_found(err.value)
    lock.create(record())
    obj = kube.resource(ENDPOINTS).get("tf-operator", namespace="default")
    assert "subsets" not in obj
    assert json.loads(obj["metadata"]["annotations"][LEADER_ANNOTATION]) == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-11-21T20:58:40Z",
        "renewTime": "2026-11-21T20:58:40Z",
        "leaderTransitions": 0,
    }
    got = lock.get()
    assert got == LeaderElectionRecord(
        "me", 15, T0.replace(microsecond=0), T0.replace(microsecond=0), 0
    )


def test_lease_lock_stores_record_in_spec_with_micro_time():
    kube = FakeKubeClient()
    lock = LeaseLock(kube, "kubeflow", "tf-operator", "me")
    lock.create(record(transitions=2))
    obj = kube.resource(LEASES).get("tf-operator", namespace="kubeflow")
    assert obj["apiVersion"] == "coordination.k8s.io/v1" and obj["kind"] == "Lease"
    assert obj["spec"] == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-11-21T20:58:40.923013Z",
        "renewTime": "2026-11-21T20:58:40.923013Z",
        "leaseTransitions": 2,
    }
    assert lock.get() == record(transitions=2)


@pytest.mark.parametrize("lock_cls", [EndpointsLock, ConfigMapLock, LeaseLock])
def test_stale_update_is_a_conflict(lock_cls):
    kube = FakeKubeClient()
    first = lock_cls(kube, "default", "l", "one")
    second = lock_cls(kube, "default", "l", "two")
    first.create(record("one"))
    second.get()
    first.get()
    first.update(record("one", transitions=1))  # a real change: new resourceVersion
    with pytest.raises(ApiError) as err:
        second.update(record("two"))
    assert is_conflict(err.value)
    assert lock_cls(kube, "default", "l", "x").get().holder_identity == "one"


def test_update_before_get_is_refused():
    with pytest.raises(RuntimeError):
        EndpointsLock(FakeKubeClient(), "default", "l", "me").update(record())


def test_empty_annotation_reads_as_empty_record():
    kube = FakeKubeClient()
    kube.resource(ENDPOINTS).create({"metadata": {"name": "l", "namespace": "default"}})
    assert EndpointsLock(kube, "default", "l", "me").get() == LeaderElectionRecord()


def test_record_event_on_lock_object():
    kube = FakeKubeClient()
    recorder = FakeRecorder()
    lock = new_lock("endpoints", kube, "default", "l", "me", recorder=recorder)
    lock.create(record())
    lock.record_event("became leader")
    assert recorder.events == ["Normal LeaderElection me became leader"]
    assert lock.describe() == "default/l"
    with pytest.raises(ValueError):
        new_lock("bogus", kube, "default", "l", "me")
