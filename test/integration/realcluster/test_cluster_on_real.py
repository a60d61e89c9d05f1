"""A whole local cluster on the real control plane: it listens on loopback only, and nothing it
started (servers, kubelets' pod processes, ports, files) outlives it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psutil

from localcluster.cluster import LocalCluster
from localcluster.testing import wait_for

PODS = ("", "v1", "pods")


def listening(processes: list[psutil.Process]) -> set[tuple[str, int]]:
    found = set()
    for process in processes:
        try:
            connections = process.net_connections(kind="inet")
        except psutil.NoSuchProcess:
            continue
        found |= {(c.laddr.ip, c.laddr.port) for c in connections if c.status == psutil.CONN_LISTEN}
    return found


def test_everything_listens_on_loopback_and_nothing_outlives_the_cluster():
    me = psutil.Process(os.getpid())
    before_children = {c.pid for c in me.children(recursive=True)}
    before_ports = listening([me])
    cluster = LocalCluster(control_plane="real", kubelet="process", nodes=1)
    cluster.start()
    try:
        state_dir = Path(cluster.state_dir)
        pod = {
            "metadata": {"name": "sleeper"},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "localcluster/none",
                        "command": [sys.executable, "-c", "import time; time.sleep(600)"],
                    }
                ]
            },
        }
        cluster.client.create(PODS, "default", pod)
        wait_for(
            lambda: (
                cluster.client.get(PODS, "default", "sleeper")["status"].get("phase") == "Running"
            ),
            60,
            what="the pod running",
        )
        started = [c for c in me.children(recursive=True) if c.pid not in before_children]
        ports = listening([me, *started]) - before_ports
        # etcd (client and peer), kube-apiserver, kube-controller-manager, kube-scheduler, the
        # kubelets' server at least
        assert len(ports) >= 6
        assert {ip for ip, _ in ports} == {"127.0.0.1"}
    finally:
        cluster.stop()
    assert not [p for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not listening([me]) - before_ports
    assert not state_dir.exists()
