"""Event recording against FakeKubeClient: creation, aggregation by patch, non-blocking."""

import logging
import threading
import time

import pytest

from support.fake_clock import FakeClock
from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.k8s.client import EVENTS, TransportError, new_not_found
from tf_operator.k8s.client.errors import new_internal_error
from tf_operator.k8s.record import EventBroadcaster, KubeEventSink, object_reference


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        pause.wait(0.002)


def tfjob(name="job1", ns="ns1"):
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "resourceVersion": "7"},
    }


@pytest.fixture
def kube():
    return FakeKubeClient()


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def broadcaster(kube, clock):
    b = EventBroadcaster(kube, clock=clock, sleep_duration=1.0)
    yield b
    b.shutdown()


def events_in(kube, ns="ns1"):
    return kube.resource(EVENTS).list(namespace=ns)["items"]


def writes(kube):
    return [a for a in kube.filter_actions("*", "events") if a.verb in ("create", "patch")]


def test_event_is_created_with_reference_source_and_name(kube, broadcaster, clock):
    rec = broadcaster.new_recorder("tf-operator", host="node-a")
    rec.eventf(tfjob(), "Normal", "SuccessfulCreatePod", "Created pod: %s", "job1-worker-0")
    wait_for(lambda: len(events_in(kube)) == 1)
    ev = events_in(kube)[0]
    assert ev["metadata"]["name"].startswith("job1.")
    int(ev["metadata"]["name"].split(".", 1)[1], 16)  # hex suffix
    assert ev["involvedObject"] == {
        "kind": "TFJob",
        "namespace": "ns1",
        "name": "job1",
        "uid": "uid-job1",
        "apiVersion": "kubeflow.org/v1",
        "resourceVersion": "7",
    }
    assert ev["source"] == {"component": "tf-operator", "host": "node-a"}
    assert ev["reason"] == "SuccessfulCreatePod"
    assert ev["message"] == "Created pod: job1-worker-0"
    assert ev["type"] == "Normal" and ev["count"] == 1
    assert ev["firstTimestamp"] == ev["lastTimestamp"] == "2026-01-01T00:00:00Z"


def test_repeated_event_becomes_a_patch_with_increasing_count(kube, broadcaster, clock):
    rec = broadcaster.new_recorder("tf-operator")
    rec.event(tfjob(), "Warning", "Failed", "boom")
    wait_for(lambda: len(writes(kube)) == 1)
    clock.step(30)
    rec.event(tfjob(), "Warning", "Failed", "boom")
    wait_for(lambda: len(writes(kube)) == 2)
    clock.step(30)
    rec.event(tfjob(), "Warning", "Failed", "boom")
    wait_for(lambda: len(writes(kube)) == 3)
    verbs = [a.verb for a in writes(kube)]
    assert verbs == ["create", "patch", "patch"]
    patch = writes(kube)[1]
    assert patch.options["patch_type"] == "strategic"
    assert patch.body == {"count": 2, "lastTimestamp": "2026-01-01T00:00:30Z", "message": "boom"}
    (ev,) = events_in(kube)
    assert ev["count"] == 3
    assert ev["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert ev["lastTimestamp"] == "2026-01-01T00:01:00Z"


def test_different_message_or_object_creates_a_new_event(kube, broadcaster):
    rec = broadcaster.new_recorder("tf-operator")
    rec.event(tfjob(), "Normal", "R", "one")
    rec.event(tfjob(), "Normal", "R", "two")
    rec.event(tfjob("job2"), "Normal", "R", "one")
    wait_for(lambda: len(writes(kube)) == 3)
    assert [a.verb for a in writes(kube)] == ["create"] * 3
    assert len({e["metadata"]["name"] for e in events_in(kube)}) == 3


def test_patch_of_deleted_event_falls_back_to_create(kube, broadcaster):
    rec = broadcaster.new_recorder("c")
    rec.event(tfjob(), "Normal", "R", "m")
    wait_for(lambda: len(events_in(kube)) == 1)
    name = events_in(kube)[0]["metadata"]["name"]
    kube.resource(EVENTS).delete(name, namespace="ns1")
    rec.event(tfjob(), "Normal", "R", "m")
    wait_for(lambda: len(events_in(kube)) == 1)
    verbs = [a.verb for a in writes(kube)]
    assert verbs == ["create", "patch", "create"]
    assert events_in(kube)[0]["count"] == 2


def test_similar_events_aggregate_after_ten_messages(kube, broadcaster):
    rec = broadcaster.new_recorder("c")
    for i in range(12):
        rec.event(tfjob(), "Normal", "Reason", f"message {i}")
    wait_for(lambda: len(writes(kube)) == 12)
    messages = sorted(e["message"] for e in events_in(kube))
    combined = [m for m in messages if m.startswith("(combined from similar events): ")]
    assert len(events_in(kube)) == 10  # 9 distinct + 1 combined, patched on repeat
    assert combined == ["(combined from similar events): message 11"]


def test_spam_filter_allows_a_burst_of_25_per_object(kube, broadcaster):
    rec = broadcaster.new_recorder("c")
    for i in range(30):
        rec.event(tfjob(), "Normal", f"Reason{i}", "m")
    rec.event(tfjob("other"), "Normal", "Marker", "m")  # another object: its own bucket
    broadcaster.shutdown()  # delivers everything queued
    assert any(e["reason"] == "Marker" for e in events_in(kube))
    assert len([e for e in events_in(kube) if e["involvedObject"]["name"] == "job1"]) == 25


def blocked_sender(kube, clock, **kwargs):
    """A one-thread recorder whose first event write hangs until ``release`` is set."""
    entered, release = threading.Event(), threading.Event()

    def slow_create(action):
        entered.set()
        release.wait(10)
        return False, None

    kube.prepend_reactor("create", "events", slow_create)
    b = EventBroadcaster(clock=clock, **kwargs)
    watcher = b.start_recording_to_sink(KubeEventSink(kube), workers=1)
    rec = b.new_recorder("c")
    rec.event(tfjob("first"), "Normal", "R", "m")
    assert entered.wait(5)
    return b, watcher, rec, release


def test_by_default_no_event_is_dropped_however_many_wait(kube, clock):
    """v0.5.3's broadcaster dropped events past 1000 queued; ours keeps them (D44)."""
    b, watcher, rec, release = blocked_sender(kube, clock)
    for i in range(1500):
        rec.event(tfjob(f"job{i}"), "Normal", "R", "m")
    assert watcher.dropped == 0 and watcher.pending() == 1500
    release.set()
    b.shutdown(timeout=30)
    assert len(events_in(kube)) == 1501


def test_a_bounded_queue_does_not_block_and_drops_when_full(kube, clock, caplog):
    b, watcher, rec, release = blocked_sender(kube, clock, max_queued_events=50)
    start = time.monotonic()
    with caplog.at_level(logging.ERROR, logger="tf_operator.k8s.record.event"):
        for i in range(200):
            rec.event(tfjob(f"job{i}"), "Normal", "R", "m")
    assert time.monotonic() - start < 2.0, "event() must not wait for the API"
    assert "event queue full" in caplog.text
    assert watcher.dropped == 150
    assert watcher.pending() == 50
    release.set()
    wait_for(lambda: len(events_in(kube)) == 51)
    b.shutdown()
    assert len(events_in(kube)) == 51  # the in-flight one + 50 queued; 150 dropped


def test_transport_errors_are_retried_server_errors_are_not(kube, clock):
    failures = {"transport": 2}

    def flaky(action):
        if action.body["reason"] == "Flaky" and failures["transport"] > 0:
            failures["transport"] -= 1
            return True, TransportError("connection refused")
        if action.body["reason"] == "Rejected":
            return True, new_internal_error("nope")
        return False, None

    kube.prepend_reactor("create", "events", flaky)
    b = EventBroadcaster(kube, clock=clock, sleep_duration=10.0)
    rec = b.new_recorder("c")
    rec.event(tfjob(), "Normal", "Rejected", "m")
    rec.event(tfjob(), "Normal", "Flaky", "m")
    wait_for(lambda: clock.has_waiters())  # first retry pause (randomised, <= 10 s)
    clock.step(10)
    wait_for(lambda: len(kube.filter_actions("create", "events")) >= 3)
    wait_for(lambda: clock.has_waiters())
    clock.step(10)
    wait_for(lambda: len(events_in(kube)) == 1)
    assert events_in(kube)[0]["reason"] == "Flaky"
    assert len(kube.filter_actions("create", "events")) == 4  # 1 rejected + 3 flaky tries
    b.shutdown()


def test_shutdown_interrupts_retry_pause(kube, clock):
    kube.prepend_reactor("create", "events", lambda a: (True, TransportError("down")))
    b = EventBroadcaster(kube, clock=clock, sleep_duration=10.0)
    b.new_recorder("c").event(tfjob(), "Normal", "R", "m")
    wait_for(lambda: clock.has_waiters())
    start = time.monotonic()
    b.shutdown(timeout=5)
    assert time.monotonic() - start < 2


def test_start_logging_and_event_watcher(clock):
    b = EventBroadcaster(clock=clock)
    lines, seen = [], []
    b.start_logging(lambda fmt, *args: lines.append(fmt % args))
    b.start_event_watcher(seen.append)
    b.new_recorder("c").event(tfjob(), "Warning", "Bad", "it broke")
    wait_for(lambda: lines and seen)
    assert "type: 'Warning' reason: 'Bad' it broke" in lines[0]
    assert seen[0]["reason"] == "Bad"
    b.shutdown()


def test_invalid_type_or_unnamed_object_is_not_recorded(clock):
    b = EventBroadcaster(clock=clock)
    seen = []
    b.start_event_watcher(seen.append)
    rec = b.new_recorder("c")
    rec.event(tfjob(), "Bogus", "R", "m")
    rec.event({"metadata": {}}, "Normal", "R", "m")
    rec.event(None, "Normal", "R", "m")
    rec.event(tfjob(), "Normal", "Good", "m")
    wait_for(lambda: seen)
    b.shutdown()
    assert [e["reason"] for e in seen] == ["Good"]


def test_event_names_are_unique_at_same_instant(clock):
    b = EventBroadcaster(clock=clock)
    seen = []
    b.start_event_watcher(seen.append)
    rec = b.new_recorder("c")
    for _ in range(5):
        rec.event(tfjob(), "Normal", "R", "m")
    wait_for(lambda: len(seen) == 5)
    b.shutdown()
    assert len({e["metadata"]["name"] for e in seen}) == 5


def test_object_reference_from_reference_and_defaults_namespace(clock):
    assert object_reference({"kind": "Pod", "name": "p", "namespace": "x"}) == {
        "kind": "Pod",
        "name": "p",
        "namespace": "x",
    }
    b = EventBroadcaster(clock=clock)
    seen = []
    b.start_event_watcher(seen.append)
    b.new_recorder("c").event({"kind": "Node", "metadata": {"name": "n1"}}, "Normal", "R", "m")
    wait_for(lambda: seen)
    b.shutdown()
    assert seen[0]["metadata"]["namespace"] == "default"


def test_not_found_helper_is_an_api_error():
    assert new_not_found("events", "x").status == 404


def test_fake_recorder_collects_strings():
    rec = FakeRecorder()
    rec.event(tfjob(), "Normal", "SuccessfulCreatePod", "Created pod: x")
    rec.eventf(tfjob(), "Warning", "Failed", "pod %s failed with %d", "p", 3)
    rec.annotated_eventf(tfjob(), {"a": "b"}, "Normal", "A", "m")
    rec.past_eventf(tfjob(), None, "Normal", "Ignored", "m")
    assert rec.events == [
        "Normal SuccessfulCreatePod Created pod: x",
        "Warning Failed pod p failed with 3",
        "Normal A m",
    ]


def test_past_eventf_uses_given_timestamp(clock):
    from datetime import UTC, datetime

    b = EventBroadcaster(clock=clock)
    seen = []
    b.start_event_watcher(seen.append)
    when = datetime(2025, 5, 6, 7, 8, 9, tzinfo=UTC)
    b.new_recorder("c").past_eventf(tfjob(), when, "Normal", "Old", "was %s", "then")
    wait_for(lambda: seen)
    b.shutdown()
    assert seen[0]["firstTimestamp"] == seen[0]["lastTimestamp"] == "2025-05-06T07:08:09Z"
    assert seen[0]["message"] == "was then"


BAD_NAMES = ["UpperCase", "a b", "-lead", "a_b", "naïve", "名前", "x" * 300, "my..job", "."]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_event_about_a_misnamed_object_gets_a_valid_name(kube, broadcaster, name):
    """client-go named the event "<object name>.<hex>", which the API server refuses when
    the object's name is not a DNS-1123 subdomain; ours is turned into one first."""
    from localcluster.controlplane.emulated.admission.validation import name_errors

    rec = broadcaster.new_recorder("tf-operator")
    rec.event(tfjob(name), "Warning", "InvalidTFJobSpec", "bad name")
    wait_for(lambda: len(events_in(kube)) == 1)
    ev = events_in(kube)[0]
    assert name_errors(ev["metadata"]["name"], "subdomain") == []
    assert ev["involvedObject"]["name"] == name


def test_event_name_prefix_keeps_valid_names_and_separates_invalid_ones():
    from tf_operator.k8s.record.event import event_name_prefix

    for valid in ("job1", "my.job", "a-b.c", "1job"):
        assert event_name_prefix(valid) == valid
    assert event_name_prefix("UpperCase").startswith("uppercase-")
    assert event_name_prefix("a b") != event_name_prefix("a_b")
    assert len(event_name_prefix("x" * 300)) <= 253 - 17


def test_the_client_broadcaster_logs_warnings_at_info_and_normal_events_at_debug(
    kube, broadcaster, caplog
):
    caplog.set_level(logging.DEBUG, logger="tf_operator.k8s.record.event")
    rec = broadcaster.new_recorder("tf-operator")
    rec.event(tfjob(), "Normal", "SuccessfulCreatePod", "Created pod: job1-worker-0")
    rec.event(tfjob(), "Warning", "FailedCreatePod", "Error creating: quota")
    wait_for(lambda: len(events_in(kube)) == 2)
    logged = {
        r.getMessage().split("reason: ")[1]: r.levelno
        for r in caplog.records
        if r.getMessage().startswith("Event(")
    }
    assert logged == {
        "'SuccessfulCreatePod' Created pod: job1-worker-0": logging.DEBUG,
        "'FailedCreatePod' Error creating: quota": logging.INFO,
    }


def test_an_events_log_line_names_the_kind_of_its_object(kube, broadcaster, caplog):
    """A structured ``kind`` field, so the lines of several kinds' controllers part (D83)."""
    caplog.set_level(logging.DEBUG, logger="tf_operator.k8s.record.event")
    rec = broadcaster.new_recorder("tf-operator")
    pytorchjob = {**tfjob(), "kind": "PyTorchJob"}
    rec.event(tfjob(), "Warning", "FailedCreatePod", "Error creating: quota")
    rec.event(pytorchjob, "Warning", "FailedCreatePod", "Error creating: quota")
    wait_for(lambda: len(caplog.records) >= 2)
    kinds = sorted(r.kind for r in caplog.records if r.getMessage().startswith("Event("))
    assert kinds == ["PyTorchJob", "TFJob"]
