"""Operator side of issue 9: when a job's PodGroup cannot be scheduled, ``kubectl describe
tfjob`` says why. The operator copies the PodGroup's ``Unschedulable`` condition (status True)
into one Warning event on the TFJob, once per change of its message, never every sync
(divergence D40)."""

from __future__ import annotations

import time

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.nodepool import NodePool
from support.crd import install_crds

from .conftest import TFJOBS, events_about, wait_for

pytestmark = pytest.mark.integration

PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")


def unschedulable_condition(registry, name: str) -> dict | None:
    group = registry.get(PODGROUPS, "default", name)
    for cond in (group.get("status") or {}).get("conditions") or []:
        if cond["type"] == "Unschedulable" and cond["status"] == "True":
            return cond
    return None


def test_unschedulable_podgroup_becomes_one_warning_event_on_the_tfjob(start_operator):
    with LocalCluster(
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=[NodePool("n", cpu="2", memory="8Gi")],
        batch_schedulers=("volcano",),
        batch_schedule_period=0.2,
    ) as cluster:
        registry = cluster.registry
        install_crds(registry)
        start_operator(cluster, "--enable-gang-scheduling=true", "--gang-scheduler-name=volcano")
        container = {"name": "tensorflow", "image": "x", "resources": {"requests": {"cpu": "2"}}}
        worker = {"replicas": 2, "template": {"spec": {"containers": [container]}}}
        job = {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": "too-big"},
            "spec": {"tfReplicaSpecs": {"Worker": worker}},
        }
        registry.create(TFJOBS, "default", job)
        cond = wait_for(lambda: unschedulable_condition(registry, "too-big"), 30, what="condition")

        def surfaced() -> list[dict]:
            return [
                e
                for e in events_about(registry, "too-big", "TFJob")
                if e["type"] == "Warning" and cond["message"] in e["message"]
            ]

        wait_for(surfaced, 10, what="Warning event on the TFJob")
        settle = time.monotonic() + 2  # a few more scheduler cycles and operator syncs
        while time.monotonic() < settle:
            time.sleep(0.2)  # nothing to wait on: the point is that nothing more happens
        assert len(surfaced()) == 1
