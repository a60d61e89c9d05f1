"""Several sink workers: bursts are delivered completely and in fewer round trips, repeats of
one event stay ordered (one create, then count-increasing patches), shutdown is bounded.

Request latency is modelled by `RoundGate`: every write waits for the next "round", and the
test advances rounds once every busy worker is waiting. The number of rounds a burst needs is
its delivery time in units of one API round trip, independent of the machine's speed.
"""

import logging
import threading
import time

from support.fake_clock import FakeClock
from support.fake_kube import FakeKubeClient
from tf_operator.k8s.client import EVENTS
from tf_operator.k8s.record import EventBroadcaster, KubeEventSink


def tfjob(name, ns="ns1"):
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
    }


def events_in(kube, ns="ns1"):
    return kube.resource(EVENTS).list(namespace=ns)["items"]


class RoundGate:
    """A reactor that holds each event write until the round after the one it arrived in."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.round = 0
        self.waiting = 0
        self.arrived_this_round = 0
        self.max_waiting = 0
        self.order: list[tuple[str, str]] = []  # (verb, event name) in arrival order

    def __call__(self, action):
        with self.cond:
            body = action.body if isinstance(action.body, dict) else {}
            self.order.append((action.verb, action.name or body["metadata"]["name"]))
            arrived = self.round
            self.waiting += 1
            self.arrived_this_round += 1
            self.max_waiting = max(self.max_waiting, self.waiting)
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.round > arrived, timeout=10)
            self.waiting -= 1
        return False, None  # let the fake store it

    def advance_when(self, busy: int, timeout: float = 5.0) -> None:
        """Wait until `busy` writes are held, then release them all."""
        with self.cond:
            arrived = self.cond.wait_for(lambda: self.arrived_this_round >= busy, timeout)
            assert arrived, f"only {self.arrived_this_round} of {busy} writes arrived"
            self.round += 1
            self.arrived_this_round = 0
            self.cond.notify_all()

    def release_all(self) -> None:
        with self.cond:
            self.round += 10**9
            self.cond.notify_all()


def deliver_burst(n: int, workers: int) -> tuple[int, int]:
    """Record `n` events about distinct objects; (rounds needed, most writes in flight)."""
    kube = FakeKubeClient()
    gate = RoundGate()
    kube.prepend_reactor("create", "events", gate)
    b = EventBroadcaster(clock=FakeClock())
    b.start_recording_to_sink(KubeEventSink(kube), workers=workers)
    rec = b.new_recorder("c")
    for i in range(n):
        rec.event(tfjob(f"job{i}"), "Normal", "Created", "m")
    rounds, left = 0, n
    try:
        while left:
            batch = min(workers, left)
            gate.advance_when(batch)
            rounds, left = rounds + 1, left - batch
    finally:
        gate.release_all()
        b.shutdown(timeout=5)
    assert len(events_in(kube)) == n
    return rounds, gate.max_waiting


def test_burst_is_delivered_completely_in_fewer_rounds_with_several_senders():
    assert deliver_burst(64, workers=1) == (64, 1)
    assert deliver_burst(64, workers=8) == (8, 8)


def test_repeats_create_once_then_patch_in_order_while_other_objects_proceed():
    kube = FakeKubeClient()
    gate = RoundGate()
    kube.prepend_reactor("create", "events", gate)
    kube.prepend_reactor("patch", "events", gate)
    b = EventBroadcaster(clock=FakeClock())
    b.start_recording_to_sink(KubeEventSink(kube), workers=4)
    rec = b.new_recorder("c")
    for _ in range(5):
        rec.event(tfjob("hot"), "Warning", "Failed", "same message")
    for i in range(3):
        rec.event(tfjob(f"other{i}"), "Normal", "Created", "m")
    try:
        # Round 1: the first "hot" write and the three others, concurrently; the hot
        # repeats wait for their key although workers are free.
        gate.advance_when(4)
        for _ in range(4):  # then one hot repeat per round, never two at once
            gate.advance_when(1)
    finally:
        gate.release_all()
        b.shutdown(timeout=5)
    assert gate.max_waiting == 4
    hot = [(verb, name) for verb, name in gate.order if name.startswith("hot.")]
    assert [verb for verb, _ in hot] == ["create", "patch", "patch", "patch", "patch"]
    assert len({name for _, name in hot}) == 1  # every patch targets the created Event
    counts = [
        a.body["count"] for a in kube.filter_actions("patch", "events") if a.name.startswith("hot.")
    ]
    assert counts == [2, 3, 4, 5]
    stored = {e["involvedObject"]["name"]: e for e in events_in(kube)}
    assert stored["hot"]["count"] == 5 and len(stored) == 4


def test_shutdown_flushes_queued_events_with_several_senders():
    kube = FakeKubeClient()
    b = EventBroadcaster(clock=FakeClock())
    b.start_recording_to_sink(KubeEventSink(kube), workers=4)
    rec = b.new_recorder("c")
    for i in range(300):
        rec.event(tfjob(f"job{i % 50}"), "Normal", f"R{i // 50}", "m")
    b.shutdown(timeout=5)
    assert len(events_in(kube)) == 300


def test_shutdown_gives_up_within_its_timeout_when_the_server_hangs(caplog):
    kube = FakeKubeClient()
    hang = threading.Event()
    entered = threading.Semaphore(0)

    def hung(action):
        entered.release()
        hang.wait(10)
        return False, None

    kube.prepend_reactor("create", "events", hung)
    b = EventBroadcaster(clock=FakeClock())
    watcher = b.start_recording_to_sink(KubeEventSink(kube), workers=2)
    rec = b.new_recorder("c")
    for i in range(10):
        rec.event(tfjob(f"job{i}"), "Normal", "R", "m")
    assert entered.acquire(timeout=5) and entered.acquire(timeout=5)
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="tf_operator.k8s.record.event"):
        b.shutdown(timeout=0.3)
    elapsed = time.monotonic() - start
    hang.set()
    assert 0.3 <= elapsed < 2.0
    assert "8 events not delivered" in caplog.text
    rec.event(tfjob("late"), "Normal", "R", "m")  # after shutdown: refused, not a "drop"
    assert watcher.dropped == 0
    assert watcher.join(5)
