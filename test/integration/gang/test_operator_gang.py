"""S8: the real operator with --enable-gang-scheduling against the local cluster's Volcano in
mode ``task-spec`` (the Volcano 1.5-1.10 predicate-cache bug): the port's
``volcano.sh/task-spec`` annotation keeps a CPU-only master and GPU workers schedulable."""

from __future__ import annotations

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.nodepool import NodePool
from localcluster.testing import BACKENDS
from support.crd import install_crds

from .conftest import PODS, TFJOBS, tfjob_condition, wait_for

pytestmark = pytest.mark.integration

VOLCANO_TASK_SPEC_MODE = {
    "actions": "enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
        {"plugins": [{"name": n} for n in ("drf", "predicates", "proportion", "nodeorder")]},
    ],
    "configurations": [{"name": "allocate", "arguments": {"predicateErrorCache": "task-spec"}}],
}
POOLS = [
    NodePool("cpu", cpu="8", memory="16Gi", labels={"resType": "CPU"}),
    NodePool(
        "gpu",
        cpu="8",
        memory="32Gi",
        gpus=2,
        labels={"resType": "GPU", "nvidia-device-enable": "enable"},
    ),
]
PODGROUPS = ("scheduling.volcano.sh", "v1beta1", "podgroups")
RUN = {"localcluster.tf-operator.io/run-seconds": "0.5"}


def replica(placement: dict, resources: dict, count: int = 1) -> dict:
    container = {"name": "tensorflow", "image": "localcluster/none", "resources": resources}
    return {
        "replicas": count,
        "template": {
            "metadata": {"annotations": RUN},
            "spec": {"containers": [container], **placement},
        },
    }


def tfjob(name: str, master_placement: dict) -> dict:
    cpu = {"requests": {"cpu": "1"}}
    gpu = {"requests": {"cpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "tfReplicaSpecs": {
                "Master": replica(master_placement, cpu),
                "Worker": replica({}, gpu, count=2),
            }
        },
    }


SELECTOR = {"nodeSelector": {"resType": "CPU"}}
AFFINITY = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "nvidia-device-enable",
                                "operator": "NotIn",
                                "values": ["enable"],
                            }
                        ]
                    }
                ]
            }
        }
    }
}


@pytest.fixture(scope="module", params=BACKENDS)
def cluster(request):
    with LocalCluster(
        control_plane=request.param,
        kubelet="simulated",
        simulated=SimulatedTiming(start_delay=0.1),
        node_pools=POOLS,
        batch_schedulers=("volcano",),
        batch_scheduler_conf={"volcano": VOLCANO_TASK_SPEC_MODE},
        batch_schedule_period=0.2,
    ) as c:
        install_crds(c.client)
        yield c


@pytest.mark.parametrize(("name", "placement"), [("tf-test", SELECTOR), ("tf-aff", AFFINITY)])
def test_s8_operator_end_to_end(cluster, start_operator, name, placement):
    registry = cluster.client
    start_operator(cluster, "--enable-gang-scheduling=true", "--gang-scheduler-name=volcano")
    registry.create(TFJOBS, "default", tfjob(name, placement))

    group = wait_for(lambda: registry.get(PODGROUPS, "default", name), 30, what="PodGroup")
    assert group["spec"]["minMember"] == 3

    def placed() -> dict | None:
        items = registry.list(PODS, "default", label_selector=f"tf-job-name={name}").items
        nodes = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in items}
        return (
            {p["metadata"]["name"]: p for p in items}
            if len(nodes) == 3 and all(nodes.values())
            else None
        )

    pods = wait_for(placed, 30, what="3 pods bound")
    for pod_name, pod in pods.items():
        replica_type = pod["metadata"]["labels"]["tf-replica-type"]
        assert pod["metadata"]["annotations"]["volcano.sh/task-spec"] == replica_type
        assert pod["spec"]["nodeName"] == ("cpu-0" if replica_type == "master" else "gpu-0"), (
            pod_name
        )
    wait_for(lambda: tfjob_condition(registry, name, "Succeeded"), 30, what="TFJob Succeeded")

    def podgroup_gone() -> bool:
        items = registry.list(PODGROUPS, "default").items
        return name not in {i["metadata"]["name"] for i in items}

    wait_for(podgroup_gone, 30, what="PodGroup deleted by the operator")
