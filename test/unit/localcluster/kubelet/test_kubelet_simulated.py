"""Kubelet + simulated runtime state machine, driven by a manual clock (no threads, no sleeps).

The real in-process ``Registry`` stores the pods; events are handed to the
kubelet by hand (``deliver``) instead of through its informer thread.
"""

import threading

import pytest

from localcluster.client.inprocess import InProcessClient
from localcluster.controlplane.emulated import Registry, StatusError
from localcluster.kubelet import (
    EXIT_CODE,
    RUN_SECONDS,
    START_SECONDS,
    IPAllocator,
    Kubelet,
    ManualClock,
    NodeConfig,
    SimulatedRuntime,
    TimerQueue,
)
from localcluster.kubelet.node import register_node

PODS = ("", "v1", "pods")
START, RESTART = 1.0, 2.0


class Harness:
    def __init__(self):
        self.registry = Registry()
        self.clock = ManualClock()
        self.timers = TimerQueue(self.clock)
        self.node = NodeConfig(name="node-a")
        register_node(InProcessClient(self.registry), self.node)
        self.ips = IPAllocator()
        runtime = SimulatedRuntime(self.timers, start_delay=START)
        self.kubelet = Kubelet(
            InProcessClient(self.registry),
            self.node,
            runtime,
            self.ips,
            self.timers,
            restart_delay=RESTART,
            max_restart_delay=4 * RESTART,
        )

    def create(self, name, annotations=None, restart_policy="Never", containers=("main",)):
        pod = {
            "metadata": {"name": name, "annotations": annotations or {}},
            "spec": {
                "nodeName": self.node.name,
                "restartPolicy": restart_policy,
                "containers": [{"name": c, "image": "busybox"} for c in containers],
            },
        }
        self.registry.create(PODS, "default", pod)
        self.deliver(name)

    def deliver(self, name, event="MODIFIED"):
        try:
            pod = self.registry.get(PODS, "default", name)
        except StatusError:
            return
        self.kubelet.on_pod(event, pod, None)
        self.kubelet.sync_dirty()

    def advance(self, seconds, step=0.5):
        """Move time forward in small steps so chained timers fire when they would."""
        remaining = seconds
        while remaining > 1e-9:
            self.clock.advance(min(step, remaining))
            remaining -= step
            self.timers.run_due()
        self.kubelet.sync_dirty()

    def status(self, name):
        return self.registry.get(PODS, "default", name)["status"]

    def container(self, name, index=0):
        return self.status(name)["containerStatuses"][index]


@pytest.fixture
def h():
    harness = Harness()
    yield harness
    harness.registry.stop()


def conditions(status):
    return {c["type"]: c for c in status["conditions"]}


def test_pod_runs_after_start_delay_then_succeeds(h):
    h.create("ok", {RUN_SECONDS: "5"})
    status = h.status("ok")
    assert status["phase"] == "Pending"
    assert h.container("ok")["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert status["podIP"].startswith("127.") and status["podIP"] != "127.0.0.1"
    assert conditions(status)["Ready"]["status"] == "False"

    h.advance(START)
    status = h.status("ok")
    assert status["phase"] == "Running"
    assert "running" in h.container("ok")["state"]
    assert {k: v["status"] for k, v in conditions(status).items()} == {
        "Initialized": "True",
        "Ready": "True",
        "ContainersReady": "True",
        "PodScheduled": "True",
    }

    h.advance(5)
    status = h.status("ok")
    assert status["phase"] == "Succeeded"
    terminated = h.container("ok")["state"]["terminated"]
    assert terminated["exitCode"] == 0 and terminated["reason"] == "Completed"
    assert terminated["startedAt"] and terminated["finishedAt"]
    assert conditions(status)["Ready"]["reason"] == "PodCompleted"


def test_never_policy_fails_on_nonzero_exit(h):
    h.create("bad", {RUN_SECONDS: "1", EXIT_CODE: "3"})
    h.advance(START + 1)
    assert h.status("bad")["phase"] == "Failed"
    terminated = h.container("bad")["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    assert h.container("bad")["restartCount"] == 0


def test_on_failure_restarts_in_place_until_success(h):
    h.create("retry", {RUN_SECONDS: "1", EXIT_CODE: "1,0"}, restart_policy="OnFailure")
    h.advance(START + 1)  # the first restart needs no back-off: it starts at once
    status = h.status("retry")
    assert status["phase"] == "Running"
    cs = h.container("retry")
    assert cs["state"]["waiting"]["reason"] == "ContainerCreating"
    assert cs["lastState"]["terminated"]["exitCode"] == 1
    assert cs["restartCount"] == 1

    h.advance(START)
    cs = h.container("retry")
    assert "running" in cs["state"] and cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["exitCode"] == 1

    h.advance(1)
    assert h.status("retry")["phase"] == "Succeeded"
    assert h.container("retry")["state"]["terminated"]["exitCode"] == 0
    events, _ = h.registry.list(
        ("", "v1", "events"), "default", field_selector="involvedObject.name=retry"
    )
    assert [e["reason"] for e in events].count("Started") == 2


def test_crash_loop_back_off_doubles_up_to_the_cap(h):
    """Restarts after 0, d, 2d, 4d... capped (d = RESTART, cap = 4d), with CrashLoopBackOff."""
    h.create(
        "crash", {START_SECONDS: "0", RUN_SECONDS: "0", EXIT_CODE: "1"}, restart_policy="Always"
    )
    h.advance(0.01, step=0.01)
    assert h.container("crash")["restartCount"] >= 1
    waits = []
    for _ in range(5):
        restarts = h.container("crash")["restartCount"]
        cs = h.container("crash")
        assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        waited = 0.0
        while h.container("crash")["restartCount"] == restarts:
            h.advance(0.5)
            waited += 0.5
        waits.append(waited)
    assert waits == [RESTART, 2 * RESTART, 4 * RESTART, 4 * RESTART, 4 * RESTART]
    cs = h.container("crash")
    message = cs["state"]["waiting"]["message"]
    assert message.startswith("back-off 8s restarting failed container=main pod=crash_default(")
    events, _ = h.registry.list(
        ("", "v1", "events"), "default", field_selector="involvedObject.name=crash"
    )
    backoff = [e for e in events if e["reason"] == "BackOff"]
    assert backoff and backoff[0]["type"] == "Warning" and backoff[0]["source"]["host"] == "node-a"


def test_always_restarts_even_after_success(h):
    h.create("loop", {RUN_SECONDS: "10"}, restart_policy="Always")
    h.advance(START + 10)
    assert h.status("loop")["phase"] == "Running"
    assert h.container("loop")["restartCount"] == 1  # first restart at once
    h.advance(START + 10)  # the second exit waits out the back-off, exit code 0 or not
    cs = h.container("loop")
    assert cs["restartCount"] == 1 and cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    h.advance(RESTART)
    assert h.container("loop")["restartCount"] == 2


def test_per_container_annotations(h):
    h.create(
        "two",
        {RUN_SECONDS: "10", f"{RUN_SECONDS}.fast": "1", f"{EXIT_CODE}.fast": "0"},
        containers=("fast", "slow"),
    )
    h.advance(START + 1)
    status = h.status("two")
    assert status["phase"] == "Running"
    fast, slow = status["containerStatuses"]
    assert fast["state"]["terminated"]["exitCode"] == 0 and "running" in slow["state"]
    assert conditions(status)["Ready"]["message"] == "containers with unready status: [fast]"
    h.advance(10)
    assert h.status("two")["phase"] == "Succeeded"


def test_graceful_deletion_is_finished_by_the_kubelet(h):
    h.create("victim")
    h.advance(START)
    deleted = h.registry.delete(PODS, "default", "victim")
    assert deleted["metadata"]["deletionTimestamp"]  # graceful: still there
    ip = h.status("victim")["podIP"]
    h.deliver("victim")
    with pytest.raises(StatusError) as err:
        h.registry.get(PODS, "default", "victim")
    assert err.value.code == 404
    h.kubelet.on_pod("DELETED", deleted, None)
    assert h.ips.in_use() == 0 and h.kubelet.record("default/victim") is None
    assert ip != h.ips.allocate() or True


def test_deleting_during_start_delay_never_starts_the_container(h):
    h.create("early")
    h.registry.delete(PODS, "default", "early")
    h.deliver("early")
    h.advance(START * 2)
    with pytest.raises(StatusError):
        h.registry.get(PODS, "default", "early")


def test_pod_ips_are_unique(h):
    for i in range(20):
        h.create(f"p{i}")
    ips = {h.status(f"p{i}")["podIP"] for i in range(20)}
    assert len(ips) == 20 and "127.0.0.1" not in ips


def test_thousands_of_pods_share_one_timer_heap(h):
    threads_before = set(threading.enumerate())
    count = 1000
    for i in range(count):
        h.create(f"bulk-{i}", {RUN_SECONDS: "3"})
    assert len(h.timers) == count
    h.advance(START)
    h.advance(3)
    items, _ = h.registry.list(PODS, "default")
    assert {p["status"]["phase"] for p in items} == {"Succeeded"}
    assert set(threading.enumerate()) - threads_before == set()


@pytest.mark.parametrize(
    ("annotations", "named"),
    [
        ({RUN_SECONDS: "soon"}, RUN_SECONDS),
        ({RUN_SECONDS: "-3"}, RUN_SECONDS),
        ({RUN_SECONDS: "inf"}, RUN_SECONDS),
        ({"localcluster.tf-operator.io/start-seconds": "nan"}, "start-seconds"),
        ({EXIT_CODE: "1,x"}, EXIT_CODE),
        ({EXIT_CODE: "300"}, EXIT_CODE),
    ],
)
def test_a_bad_annotation_becomes_a_config_error_and_an_event(h, annotations, named):
    # issue 13 #9: it used to leave the pod in ContainerCreating with no event
    h.create("badcfg", annotations)
    h.advance(0.5)
    status = h.status("badcfg")
    assert status["phase"] == "Failed"
    terminated = h.container("badcfg")["state"]["terminated"]
    assert terminated["reason"] == "CreateContainerConfigError"
    assert named in terminated["message"]
    events, _ = h.registry.list(("", "v1", "events"), "default")
    failed = [e for e in events if e["reason"] == "Failed"]
    assert failed and failed[0]["type"] == "Warning"
    assert failed[0]["involvedObject"]["name"] == "badcfg"
    assert failed[0]["message"].startswith("Error: invalid annotation")


def test_a_bad_annotation_restarts_as_the_policy_says(h):
    h.create("badretry", {RUN_SECONDS: "soon"}, restart_policy="OnFailure")
    h.advance(0.5)
    cs = h.container("badretry")
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["lastState"]["terminated"]["reason"] == "CreateContainerConfigError"
    assert h.container("badretry")["restartCount"] == 1  # the first restart needs no back-off
    h.advance(RESTART + 0.5)
    assert h.container("badretry")["restartCount"] == 2
