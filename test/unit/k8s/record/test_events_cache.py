"""The event correlator on its own: LRU, aggregation window, de-duplication keys."""

from support.fake_clock import FakeClock
from tf_operator.k8s.record.events_cache import (
    AGGREGATE_INTERVAL,
    EventCorrelator,
    LRUCache,
    event_key,
)


def event(message="m", reason="R", name="job1"):
    return {
        "metadata": {"name": f"{name}.1", "namespace": "ns"},
        "involvedObject": {"kind": "TFJob", "namespace": "ns", "name": name, "uid": "u"},
        "source": {"component": "c"},
        "reason": reason,
        "message": message,
        "type": "Normal",
        "count": 1,
        "firstTimestamp": "t0",
        "lastTimestamp": "t1",
    }


def test_lru_forgets_least_recently_used():
    cache = LRUCache(2)
    cache.add("a", 1)
    cache.add("b", 2)
    assert cache.get("a") == 1  # a is now most recent
    cache.add("c", 3)
    assert cache.get("b") is None
    assert cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2


def test_first_event_has_no_patch_repeat_has_count_patch():
    c = EventCorrelator(FakeClock())
    first = c.correlate(event())
    assert first.patch is None and first.event["count"] == 1
    c.update_state({**first.event, "metadata": {**first.event["metadata"], "resourceVersion": "5"}})
    second = c.correlate({**event(), "lastTimestamp": "t2", "metadata": {"name": "job1.2"}})
    assert second.event["metadata"]["name"] == "job1.1"  # the first event is patched
    assert second.event["metadata"]["resourceVersion"] == "5"
    assert second.event["firstTimestamp"] == "t0"
    assert second.patch == {"count": 2, "lastTimestamp": "t2", "message": "m"}


def test_aggregation_window_restarts_after_interval():
    clock = FakeClock()
    c = EventCorrelator(clock, make_name=lambda n: n + ".agg")
    for i in range(9):
        assert not c.correlate(event(f"m{i}")).event["message"].startswith("(combined")
    clock.step(AGGREGATE_INTERVAL + 1)  # the group is forgotten: counting restarts
    for i in range(9):
        assert not c.correlate(event(f"n{i}", name="job1")).event["message"].startswith("(")
    combined = c.correlate(event("n9")).event
    assert combined["message"] == "(combined from similar events): n9"
    assert combined["metadata"]["name"] == "job1.agg"


def test_event_key_distinguishes_message_reason_and_object():
    keys = {event_key(event()), event_key(event("x")), event_key(event(reason="Y"))}
    keys.add(event_key(event(name="other")))
    assert len(keys) == 4
