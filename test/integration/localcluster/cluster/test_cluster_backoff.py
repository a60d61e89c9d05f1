"""Restart back-off on the process kubelet, as kubectl shows it: a crashing container is
restarted at once, then waits in CrashLoopBackOff (here 30 s: the test needs only the wait)."""

import re

import pytest

from localcluster.cluster import LocalCluster, SimulatedTiming
from localcluster.testing import kubectl, wait_for

pytestmark = pytest.mark.integration

PODS = ("", "v1", "pods")


def test_crashing_container_waits_in_crash_loop_back_off():
    timing = SimulatedTiming(restart_delay=30, max_restart_delay=300)
    with LocalCluster(kubelet="process", simulated=timing) as cluster:
        spec = {
            "restartPolicy": "Always",
            "containers": [{"name": "c", "image": "x", "command": ["false"]}],
        }
        cluster.registry.create(PODS, "default", {"metadata": {"name": "crash"}, "spec": spec})

        def waiting():
            status = cluster.registry.get(PODS, "default", "crash")["status"]
            state = (status.get("containerStatuses") or [{}])[0]
            reason = (state.get("state") or {}).get("waiting", {}).get("reason")
            return state if reason == "CrashLoopBackOff" else None

        state = wait_for(waiting, 30)
        assert state["restartCount"] == 1  # the first restart needed no back-off
        assert state["state"]["waiting"]["message"].startswith(
            "back-off 30s restarting failed container=c pod=crash_default("
        )
        assert state["lastState"]["terminated"]["exitCode"] == 1
        row = kubectl(cluster, "get", "pod", "crash", "--no-headers", check=True).stdout
        assert re.match(r"crash +0/1 +CrashLoopBackOff +1 \(\d+s ago\)", row), row
        events = kubectl(
            cluster, "get", "events", "--field-selector=involvedObject.name=crash", check=True
        ).stdout
        assert (
            "BackOff" in events
            and "Back-off restarting failed container c in pod crash_default" in events
        )
