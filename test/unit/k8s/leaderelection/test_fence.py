"""The write fence: writes go out only while the lease is held; reads always do."""

import pytest

from support.fake_kube import FakeKubeClient
from tf_operator.k8s.client import PODS
from tf_operator.k8s.client.scope import WriteFenced, current_scope
from tf_operator.k8s.leaderelection.fence import FencedClient

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}


class Lease:
    def __init__(self) -> None:
        self.held = True

    def __call__(self) -> bool:
        return self.held


def test_writes_need_the_lease_and_reads_do_not():
    kube, lease = FakeKubeClient(), Lease()
    pods = FencedClient(kube, lease).resource(PODS)
    pods.create(POD, namespace="default")
    lease.held = False
    kube.clear_actions()
    for write in (
        lambda: pods.create(POD, namespace="default"),
        lambda: pods.update(POD, namespace="default"),
        lambda: pods.update_status(POD, namespace="default"),
        lambda: pods.patch("p", {"metadata": {"labels": {"a": "b"}}}, namespace="default"),
        lambda: pods.delete("p", namespace="default"),
    ):
        with pytest.raises(WriteFenced):
            write()
    assert kube.actions == []  # nothing reached the API
    assert pods.get("p", namespace="default")["metadata"]["name"] == "p"
    assert len(pods.list(namespace="default")["items"]) == 1


def test_a_write_carries_the_fence_to_the_transport():
    """The transport asks the fence again before each attempt (after a Retry-After wait)."""
    kube, lease = FakeKubeClient(), Lease()
    fences = []
    kube.prepend_reactor(
        "create", "pods", lambda _a: (fences.append(current_scope().fence), (False, None))[1]
    )
    FencedClient(kube, lease).resource(PODS).create(POD, namespace="default")
    assert fences == [lease]
    assert current_scope().fence is None  # only for the call
