"""The local cluster's command line for gang scheduling: --node-pool, --batch-scheduler,
--batch-scheduler-conf, --batch-schedule-period, --scheduler-plugins and --coscheduling-arg,
seen through the official client, on either control plane (``--control-plane``)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from localcluster.testing import wait_for

pytestmark = pytest.mark.integration


@contextlib.contextmanager
def cluster_cli(tmp_path: Path, control_plane: str, *flags: str) -> Iterator:
    """``python -m localcluster`` with a simulated kubelet on ``control_plane`` and these flags,
    once ready: the official client's ApiClient on its kubeconfig. It must stop cleanly on
    SIGTERM."""
    kubeconfig = tmp_path / "kubeconfig"
    argv = [sys.executable, "-m", "localcluster", "--port", "0", "--kubelet", "simulated"]
    argv += ["--control-plane", control_plane]
    argv += ["--kubeconfig", str(kubeconfig), "--log-level", "warning", *flags]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("ready "), proc.stderr.read() if proc.poll() is not None else line
        from kubernetes import config

        yield config.new_client_from_config(config_file=str(kubeconfig))
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


def test_node_pools_and_batch_schedulers_from_the_command_line(tmp_path, control_plane):
    conf = tmp_path / "volcano.yaml"
    conf.write_text('actions: "enqueue, allocate, backfill"\ntiers: []\n')
    with cluster_cli(
        tmp_path,
        control_plane,
        "--node-pool", "name=cpu,count=2,cpu=4,memory=8Gi,labels=resType=CPU",
        "--node-pool", "name=gpu,gpus=2,labels=resType=GPU;zone=a,taints=nvidia.com/gpu=present:NoSchedule",
        "--batch-scheduler", "volcano", "--batch-scheduler", "kube-batch",
        "--batch-scheduler-conf", f"volcano={conf}", "--batch-schedule-period", "0.5s",
    ) as api:  # fmt: skip
        from kubernetes import client

        nodes = {n.metadata.name: n for n in client.CoreV1Api(api).list_node().items}
        assert sorted(nodes) == ["cpu-0", "cpu-1", "gpu-0"]
        assert nodes["cpu-1"].status.capacity["cpu"] == "4"
        assert nodes["gpu-0"].metadata.labels["zone"] == "a"
        assert nodes["gpu-0"].status.capacity["nvidia.com/gpu"] == "2"
        (taint,) = nodes["gpu-0"].spec.taints
        assert (taint.key, taint.value, taint.effect) == ("nvidia.com/gpu", "present", "NoSchedule")
        custom = client.CustomObjectsApi(api)
        for group, version in (
            ("scheduling.volcano.sh", "v1beta1"),
            ("scheduling.incubator.k8s.io", "v1alpha1"),
        ):
            queues = custom.list_cluster_custom_object(group, version, "queues")["items"]
            assert [q["metadata"]["name"] for q in queues] == ["default"]


def test_scheduler_plugins_from_the_command_line(tmp_path, control_plane):
    flags = ("--scheduler-plugins", "--coscheduling-arg", "permitWaitingTimeSeconds=5")
    with cluster_cli(tmp_path, control_plane, *flags) as api:
        from kubernetes import client

        custom = client.CustomObjectsApi(api)
        group = {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "g"},
            "spec": {"minMember": 1},
        }
        custom.create_namespaced_custom_object(
            "scheduling.x-k8s.io", "v1alpha1", "default", "podgroups", group
        )
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name="p", labels={"scheduling.x-k8s.io/pod-group": "g"}),
            spec=client.V1PodSpec(
                scheduler_name="scheduler-plugins-scheduler",
                containers=[client.V1Container(name="c", image="x")],
            ),
        )
        core = client.CoreV1Api(api)
        core.create_namespaced_pod("default", pod)

        def placed() -> bool:
            phase = (
                custom.get_namespaced_custom_object(
                    "scheduling.x-k8s.io", "v1alpha1", "default", "podgroups", "g"
                )
                .get("status", {})
                .get("phase")
            )
            return bool(core.read_namespaced_pod("p", "default").spec.node_name) and phase in (
                "Scheduling",
                "Running",
            )

        wait_for(placed, 30, what="the pod bound and its group past Pending")


@pytest.mark.parametrize(
    ("flag", "value", "complaint"),
    [
        ("--node-pool", "count=2", "needs a name"),
        ("--node-pool", "name=x,taints=a=b:Sometimes", "NoSchedule"),
        ("--batch-scheduler-conf", "yunikorn=/tmp/x", "FLAVOUR=PATH"),
        ("--batch-schedule-period", "soon", "seconds"),
        ("--coscheduling-arg", "permitWaitingTime=3", "unknown Coscheduling arguments"),
        ("--coscheduling-arg", "podGroupBackoffSeconds=-1", "cannot be negative"),
    ],
)
def test_bad_values_are_refused_with_a_reason(flag, value, complaint):
    out = subprocess.run(
        [sys.executable, "-m", "localcluster", flag, value],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert complaint in out.stderr
