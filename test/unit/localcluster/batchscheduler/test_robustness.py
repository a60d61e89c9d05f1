"""Nothing a pod carries can stop a batch scheduler: a pod it cannot evaluate gets
``PodScheduled=False/SchedulerError`` and a ``FailedScheduling`` event, and every other gang is
scheduled as usual (issue 13 item 2, for the batch scheduler)."""

from __future__ import annotations

import uuid

import pytest

from localcluster.nodepool import NodePool

PODS = ("", "v1", "pods")


def store_unvalidated(registry, pod: dict) -> None:
    """Write a pod straight into the store, as a buggy client past validation would leave it."""
    pod = {"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Pending"}, **pod}
    meta = pod["metadata"]
    meta.update(
        namespace="default", uid=str(uuid.uuid4()), creationTimestamp="2024-01-01T00:00:00Z"
    )
    with registry.store.lock:
        registry.store.commit(registry.resolve(PODS), ("default", meta["name"]), pod, "ADDED", None)


def malformed(name: str, scheduler: str, group: str, **spec) -> dict:
    container = {"name": "c", "image": "x", **spec.pop("container", {})}
    return {
        "metadata": {"name": name, "annotations": {"scheduling.k8s.io/group-name": group}},
        "spec": {"schedulerName": scheduler, "containers": [container], **spec},
    }


@pytest.mark.parametrize("flavour", ["kube-batch", "volcano"])
def test_malformed_pods_are_reported_and_others_scheduled(gang, flavour):
    g = gang(flavour, [NodePool("n", cpu="4", memory="8Gi")])
    g.podgroup("bad", 1)
    g.podgroup("weird", 1)
    g.podgroup("good", 2)
    lots = {"resources": {"requests": {"cpu": "lots"}}}
    store_unvalidated(g.registry, malformed("bad-0", flavour, "bad", container=lots))
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": "nope"}}
    store_unvalidated(g.registry, malformed("weird-0", flavour, "weird", affinity=affinity))
    g.pod("good-0", "good", cpu="1")
    g.pod("good-1", "good", cpu="1")
    g.run(2)
    assert g.bound("good-0", "good-1") == {"good-0": "n-0", "good-1": "n-0"}
    for name, needle in (("bad-0", "invalid quantity 'lots'"), ("weird-0", "cannot evaluate pod")):
        events = [e for e in g.events(name) if e["reason"] == "FailedScheduling"]
        assert len(events) == 1 and events[0]["type"] == "Warning"
        assert events[0]["source"]["component"] == flavour
        assert needle in events[0]["message"]
        # the API server may refuse to write the status of an object that fails validation
        cond = g.pod_condition(name)
        if cond is not None:
            assert (cond["status"], cond["reason"]) == ("False", "SchedulerError")
