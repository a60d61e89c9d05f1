"""S18: each scheduler takes only its own pods. Only Volcano runs (periodic loop); a kube-batch
pod with its PodGroup stays untouched by everyone, the default scheduler (ours, or
kube-scheduler on the real control plane) binds its own pod."""

from __future__ import annotations

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.testing import wait_for
from support.crd import install_crds

from .conftest import EVENTS, PODS, ROOT, event_source

pytestmark = pytest.mark.integration

KB_PODGROUPS = ("scheduling.incubator.k8s.io", "v1alpha1", "podgroups")
VC_PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")


def podgroup(gvr, name: str) -> dict:
    return {
        "apiVersion": f"{gvr[0]}/{gvr[1]}",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minMember": 1},
    }


def pod(name: str, scheduler: str | None, group: str | None) -> dict:
    meta: dict = {"name": name, "namespace": "default"}
    if group:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    spec: dict = {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]
    }
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"metadata": meta, "spec": spec}


def test_s18_routing(control_plane):
    with LocalCluster(
        control_plane=control_plane,
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        batch_schedulers=("volcano",),
        batch_schedule_period=0.2,
    ) as cluster:
        registry = cluster.client
        install_crds(registry, ROOT / "manifests/components/gang-kube-batch/podgroup-crd.yaml")
        registry.create(KB_PODGROUPS, "default", podgroup(KB_PODGROUPS, "kb"))
        registry.create(VC_PODGROUPS, "default", podgroup(VC_PODGROUPS, "vc"))
        registry.create(PODS, "default", pod("kb-0", "kube-batch", "kb"))
        registry.create(PODS, "default", pod("vc-0", "volcano", "vc"))
        registry.create(PODS, "default", pod("df-0", None, None))

        def node(name: str) -> str | None:
            return registry.get(PODS, "default", name)["spec"].get("nodeName")

        wait_for(lambda: node("vc-0") and node("df-0"), 10, what="vc-0 and df-0 bound")
        # a few more volcano cycles: kb-0 must still be untouched
        scheduler = cluster.batch_schedulers["volcano"]
        scheduler.run_once()
        scheduler.run_once()
        kb = registry.get(PODS, "default", "kb-0")
        assert not kb["spec"].get("nodeName")
        assert not [c for c in kb["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
        assert "status" not in registry.get(KB_PODGROUPS, "default", "kb")
        events = registry.list(EVENTS, "default").items
        about = {}
        for e in events:
            about.setdefault(e["involvedObject"]["name"], []).append(e)
        assert "kb-0" not in about and "kb" not in about
        scheduled = [
            e["involvedObject"]["name"]
            for e in events
            if e["reason"] == "Scheduled"
            and event_source(e) == "volcano"
            and e["involvedObject"].get("kind") == "Pod"
        ]
        assert scheduled == ["vc-0"]
        default = {
            e["involvedObject"]["name"] for e in events if event_source(e) == "default-scheduler"
        }
        assert default == {"df-0"}
