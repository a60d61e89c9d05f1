"""A PodGroup deleted under a waiting gang is made again at once, not at the job's resync
(issue 27, Low): its deletion queues its job."""

from __future__ import annotations

import time

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.nodepool import NodePool
from support.crd import install_crds

from .conftest import TFJOBS, wait_for

pytestmark = pytest.mark.integration

PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")


def test_a_deleted_pod_group_comes_back_before_the_resync(start_operator):
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
            "metadata": {"name": "waiting"},
            "spec": {"tfReplicaSpecs": {"Worker": worker}},
        }
        registry.create(TFJOBS, "default", job)  # a gang of 2 that cannot fit on 2 CPUs
        first = wait_for(lambda: registry.get(PODGROUPS, "default", "waiting"), 30, what="group")
        registry.delete(PODGROUPS, "default", "waiting")
        deleted = time.monotonic()

        def again() -> dict | None:
            items, _ = registry.list(PODGROUPS, "default")
            return next(
                (g for g in items if g["metadata"]["uid"] != first["metadata"]["uid"]), None
            )

        wait_for(again, 10, what="the PodGroup made again")  # the job's resync is 30 s
        print(f"PodGroup back {time.monotonic() - deleted:.2f}s after its deletion")
