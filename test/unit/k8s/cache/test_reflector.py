import threading
import time

import pytest

from support.fake_clock import FakeClock
from support.fake_kube import FakeKubeClient, ScriptedWatch
from tf_operator.k8s.cache import Backoff, ListWatch, Reflector
from tf_operator.k8s.client import PODS, TransportError, new_internal_error, new_resource_expired


def wait_until(pred, timeout=5.0):
    """Wait for a condition that has no notification of its own."""
    deadline = time.monotonic() + timeout
    gate = threading.Event()
    while not pred():
        assert time.monotonic() < deadline, "condition not met in time"
        gate.wait(0.005)


def pod(name, labels=None):
    meta = {"name": name, "namespace": "ns", "labels": labels or {}}
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "image": "i"}]}}


def start(reflector, stop):
    t = threading.Thread(target=reflector.run, args=(stop,), daemon=True)
    t.start()
    return t


def rv(fake, n):
    """The resourceVersion of the fixture's n-th write (the API numbers them globally)."""
    return str(fake.base_rv + n)


@pytest.fixture
def fake():
    f = FakeKubeClient()
    f.ensure_namespace("ns")
    f.base_rv = int(f.resource_version)
    for n in ("a", "b"):
        f.resource(PODS).create(pod(n))
    f.clear_actions()
    return f


def make(fake, store, backoff, **kw):
    return Reflector(ListWatch(fake.resource(PODS)), store, backoff=backoff, **kw)


def test_lists_at_rv0_then_watches_from_list_rv(fake, recording_store, fast_backoff, stop_event):
    r = make(fake, recording_store, fast_backoff, min_watch_timeout=300)
    t = start(r, stop_event)
    recording_store.wait_for(lambda s: s.ops("replace"))
    assert recording_store.ops("replace") == [(["a", "b"], rv(fake, 2))]
    wait_until(lambda: fake.watch_count() == 1)
    fake.resource(PODS).create(pod("c"))
    fake.resource(PODS).patch("a", {"metadata": {"labels": {"x": "1"}}}, "ns")
    fake.resource(PODS).delete("b", "ns")
    recording_store.wait_for(lambda s: s.ops("delete"))
    # kube-apiserver deletes an unscheduled pod in two writes, as the emulator does: its
    # deletionTimestamp (an update), then its removal
    assert [c for c in recording_store.calls if c[0] != "replace"] == [
        ("add", "c"),
        ("update", "a"),
        ("update", "b"),
        ("delete", "b"),
    ]
    assert r.last_sync_resource_version() == rv(fake, 6)
    lst, watch = fake.filter_actions("list"), fake.filter_actions("watch")
    assert (lst[0].options["resource_version"], lst[0].options["limit"]) == ("0", 500)
    assert watch[0].options["resource_version"] == rv(fake, 2)
    assert 300 <= watch[0].options["timeout_seconds"] < 600
    stop_event.set()
    t.join(5)
    assert not t.is_alive()


def test_watch_end_rewatches_from_last_rv_without_losing_events(
    fake, recording_store, fast_backoff, stop_event
):
    r = make(fake, recording_store, fast_backoff)
    start(r, stop_event)
    wait_until(lambda: fake.watch_count() == 1)
    fake.resource(PODS).create(pod("c"))
    recording_store.wait_for(lambda s: s.ops("add") == ["c"])
    # The server ends the watch; a write lands before the client re-watches.
    gate = threading.Event()
    fake.prepend_reactor("watch", "pods", lambda a: (gate.wait(5) and False, None))
    fake.end_watches()
    fake.resource(PODS).create(pod("d"))
    gate.set()
    recording_store.wait_for(lambda s: s.ops("add") == ["c", "d"])
    watches = fake.filter_actions("watch")
    assert watches[1].options["resource_version"] == rv(fake, 3)
    assert r.list_count == 1  # no relist was needed


def test_error_410_event_during_watch_relists_consistently(
    fake, recording_store, fast_backoff, stop_event
):
    r = make(fake, recording_store, fast_backoff, page_size=1)
    start(r, stop_event)
    wait_until(lambda: fake.watch_count() == 1)
    fake.send_watch_error(new_resource_expired().body)
    recording_store.wait_for(lambda s: len(s.ops("replace")) == 2)
    lists = fake.filter_actions("list")
    # Both lists come in pages; the relist is a consistent read (RV "").
    assert [(a.options["resource_version"], a.options["limit"]) for a in lists] == [
        ("0", 1),
        (None, 1),
        (None, 1),
        (None, 1),
    ]
    assert [bool(a.options["continue_token"]) for a in lists] == [False, True, False, True]
    assert recording_store.ops("replace")[1] == (["a", "b"], rv(fake, 2))


def test_410_at_watch_start_relists(fake, recording_store, fast_backoff, stop_event):
    calls = []

    def expired_once(action):
        calls.append(action)
        return (True, new_resource_expired()) if len(calls) == 1 else (False, None)

    fake.prepend_reactor("watch", "pods", expired_once)
    r = make(fake, recording_store, fast_backoff)
    start(r, stop_event)
    recording_store.wait_for(lambda s: len(s.ops("replace")) == 2)
    wait_until(lambda: fake.watch_count() == 1)
    assert r.list_count == 2


def test_compacted_history_gives_error_event_and_relist(
    fake, recording_store, fast_backoff, stop_event
):
    r = make(fake, recording_store, fast_backoff)
    start(r, stop_event)
    wait_until(lambda: fake.watch_count() == 1)
    gate = threading.Event()
    fake.prepend_reactor("watch", "pods", lambda a: (gate.wait(5) and False, None))
    fake.end_watches()
    fake.resource(PODS).delete("a", "ns")
    fake.resource(PODS).create(pod("z"))
    fake.compact()  # the client's resourceVersion is now too old
    gate.set()
    recording_store.wait_for(lambda s: len(s.ops("replace")) == 2)
    # the pod's deletion is two writes (deletionTimestamp, then removal)
    assert recording_store.ops("replace")[1] == (["b", "z"], rv(fake, 5))


def test_connection_drop_rewatches_with_backoff(fake, recording_store, fast_backoff, stop_event):
    r = make(fake, recording_store, fast_backoff)
    start(r, stop_event)
    wait_until(lambda: fake.watch_count() == 1)
    fake.break_watches()
    wait_until(lambda: len(fake.filter_actions("watch")) == 2 and fake.watch_count() == 1)
    fake.resource(PODS).create(pod("c"))
    recording_store.wait_for(lambda s: s.ops("add") == ["c"])
    assert r.list_count == 1


def test_watch_start_transport_error_retries_watch(fake, recording_store, fast_backoff, stop_event):
    failures = []

    def refuse_twice(action):
        if len(failures) < 2:
            failures.append(action)
            return True, TransportError("connection refused")
        return False, None

    fake.prepend_reactor("watch", "pods", refuse_twice)
    r = make(fake, recording_store, fast_backoff)
    start(r, stop_event)
    wait_until(lambda: fake.watch_count() == 1)
    assert r.list_count == 1 and len(fake.filter_actions("watch")) == 3


def test_an_unexpected_watch_error_relists_instead_of_ending_the_reflector(
    fake, recording_store, fast_backoff, stop_event
):
    failures = []

    def break_once(action):
        if not failures:
            failures.append(action)
            return True, RuntimeError("a bug below the reflector")
        return False, None

    fake.prepend_reactor("watch", "pods", break_once)
    r = make(fake, recording_store, fast_backoff)
    t = start(r, stop_event)
    wait_until(lambda: fake.watch_count() == 1)
    fake.resource(PODS).create(pod("c"))
    recording_store.wait_for(lambda s: s.ops("add") == ["c"])
    assert failures and r.list_count == 2 and t.is_alive()


def test_list_failure_backs_off_and_retries(fake, recording_store, fast_backoff, stop_event):
    fails = []

    def fail_once(action):
        if not fails:
            fails.append(1)
            return True, new_internal_error("etcd unhappy")
        return False, None

    fake.prepend_reactor("list", "pods", fail_once)
    start(make(fake, recording_store, fast_backoff), stop_event)
    recording_store.wait_for(lambda s: s.ops("replace"))


def test_expired_rv0_list_falls_back_to_consistent_list(
    fake, recording_store, fast_backoff, stop_event
):
    fake.prepend_reactor(
        "list",
        "pods",
        lambda a: (
            (True, new_resource_expired())
            if a.options["resource_version"] == "0"
            else (False, None)
        ),
    )
    start(make(fake, recording_store, fast_backoff), stop_event)
    recording_store.wait_for(lambda s: s.ops("replace"))
    assert [a.options["resource_version"] for a in fake.filter_actions("list")] == ["0", None]


def test_a_continue_token_that_keeps_expiring_ends_in_one_full_list(
    fake, recording_store, fast_backoff, stop_event
):
    fake.prepend_reactor(
        "list",
        "pods",
        lambda a: (True, new_resource_expired()) if a.options["continue_token"] else (False, None),
    )
    r = make(fake, recording_store, fast_backoff, page_size=1)
    r._rv_unavailable = True  # force the paginated path
    start(r, stop_event)
    recording_store.wait_for(lambda s: s.ops("replace"))
    assert recording_store.ops("replace") == [(["a", "b"], rv(fake, 2))]
    firsts = [
        a.options["limit"] for a in fake.filter_actions("list") if not a.options["continue_token"]
    ]
    assert firsts == [1, 1, 1, None]  # paged three times, then one list without a limit


def test_an_expired_continue_token_pages_again_from_the_latest_state(
    fake, recording_store, fast_backoff, stop_event
):
    expired = []

    def expire_once(a):
        if a.options["continue_token"] and not expired:
            expired.append(a)
            return True, new_resource_expired()
        return False, None

    fake.prepend_reactor("list", "pods", expire_once)
    r = make(fake, recording_store, fast_backoff, page_size=1)
    r._rv_unavailable = True
    start(r, stop_event)
    recording_store.wait_for(lambda s: s.ops("replace"))
    assert recording_store.ops("replace") == [(["a", "b"], rv(fake, 2))]
    assert all(a.options["limit"] == 1 for a in fake.filter_actions("list"))  # never in one go


def test_listed_pages_are_transformed_as_they_arrive(
    fake, recording_store, fast_backoff, stop_event
):
    def slim(obj):  # idempotent, as informer transforms must be
        return {"kind": obj.get("kind"), "metadata": obj["metadata"]}

    r = make(fake, recording_store, fast_backoff, page_size=1, transform=slim)
    r._rv_unavailable = True
    start(r, stop_event)
    recording_store.wait_for(lambda s: s.ops("replace"))
    assert all("spec" not in obj for obj in recording_store.objects.values())


class ScriptedListWatch:
    """A ListWatch double: one list result, then the given watch streams in turn."""

    def __init__(self, items, rv, streams):
        self.items, self.rv, self.streams = items, rv, list(streams)
        self.watch_rvs = []
        self.cond = threading.Condition()

    def list(self, resource_version=None, limit=None, continue_token=None):
        return {"metadata": {"resourceVersion": self.rv}, "items": list(self.items)}

    def watch(self, resource_version=None, timeout_seconds=None, allow_bookmarks=False):
        with self.cond:
            self.watch_rvs.append((resource_version, allow_bookmarks))
            self.cond.notify_all()
            if self.streams:
                return self.streams.pop(0)
        return ScriptedWatch()


def test_bookmarks_advance_rv_only(recording_store, fast_backoff, stop_event):
    s1 = ScriptedWatch()
    s1.push("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "40"}})
    s1.push("ADDED", {"metadata": {"name": "x", "namespace": "ns", "resourceVersion": "41"}})
    s1.push("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "50"}})
    s1.end()
    lw = ScriptedListWatch([], "10", [s1])
    r = Reflector(lw, recording_store, backoff=fast_backoff, allow_bookmarks=True)
    start(r, stop_event)
    with lw.cond:
        assert lw.cond.wait_for(lambda: len(lw.watch_rvs) == 2, 5)
    assert lw.watch_rvs == [("10", True), ("50", True)]
    assert recording_store.ops("add") == ["x"]


def test_list_items_get_kind_and_api_version(recording_store, fast_backoff, stop_event):
    lw = ScriptedListWatch([{"metadata": {"name": "a", "namespace": "ns"}}], "1", [])
    r = Reflector(
        lw, recording_store, backoff=fast_backoff, expected_kind="Pod", expected_api_version="v1"
    )
    start(r, stop_event)
    recording_store.wait_for(lambda s: s.ops("replace"))
    assert recording_store.objects["ns/a"]["kind"] == "Pod"
    assert recording_store.objects["ns/a"]["apiVersion"] == "v1"


def test_stop_closes_blocked_watch_promptly(fake, recording_store, fast_backoff):
    stop = threading.Event()
    t = start(make(fake, recording_store, fast_backoff), stop)
    wait_until(lambda: fake.watch_count() == 1)
    stop.set()
    t.join(2)
    assert not t.is_alive()
    assert fake.watch_count() == 0


def test_resync_loop_uses_clock_and_should_resync(recording_store, fast_backoff, stop_event):
    clock = FakeClock()
    answers = iter([False, True])
    lw = ScriptedListWatch([], "1", [])
    r = Reflector(
        lw,
        recording_store,
        backoff=fast_backoff,
        resync_period=30,
        clock=clock,
        should_resync=lambda: next(answers, True),
    )
    start(r, stop_event)
    assert clock.block_until_waiters(1)
    clock.step(30)  # should_resync says no
    assert clock.block_until_waiters(1)
    assert recording_store.resyncs == 0
    clock.step(30)
    recording_store.wait_for(lambda s: s.resyncs == 1)


class CountingBackoff(Backoff):
    def __init__(self):
        super().__init__(0.001, 0.002)
        self.delays = 0
        self.cond = threading.Condition()

    def next(self):
        with self.cond:
            self.delays += 1
            self.cond.notify_all()
        return super().next()


def test_immediately_ending_empty_watches_are_throttled(recording_store, stop_event):
    """No hot loop against a server that ends every watch at once: each rewatch (from the
    same resourceVersion) waits ``short_watch_delay``."""
    ended = []
    for _ in range(3):
        s = ScriptedWatch()
        s.end()
        ended.append(s)
    lw = ScriptedListWatch([], "1", ended)
    backoff = CountingBackoff()
    started = time.monotonic()
    start(Reflector(lw, recording_store, backoff=backoff, short_watch_delay=0.1), stop_event)
    with lw.cond:
        assert lw.cond.wait_for(lambda: len(lw.watch_rvs) >= 4, 5)
    assert time.monotonic() - started >= 0.3  # three delays before the fourth watch
    assert [rv for rv, _ in lw.watch_rvs[:4]] == ["1", "1", "1", "1"]
    assert backoff.delays == 0


def test_short_empty_watches_are_throttled_not_escalated(recording_store, stop_event):
    """Watches the server keeps closing at once with no events (e.g. dropped while nothing
    happens) wait a fixed short delay each time; the failure backoff never grows, so the
    first change after the storm is seen within that delay, not after up to a minute."""
    streams = []
    for _ in range(5):
        s = ScriptedWatch()
        s.end()
        streams.append(s)
    live = ScriptedWatch()
    streams.append(live)
    lw = ScriptedListWatch([], "10", streams)
    # A failure backoff this long would stall the test: it must not be used here.
    slow = Backoff(initial=60.0, maximum=60.0, jitter=0.0)
    r = Reflector(lw, recording_store, backoff=slow, short_watch_delay=0.01)
    start(r, stop_event)
    with lw.cond:
        assert lw.cond.wait_for(lambda: len(lw.watch_rvs) == 6, 5)
    live.push("ADDED", {"metadata": {"name": "x", "namespace": "ns", "resourceVersion": "11"}})
    recording_store.wait_for(lambda s: s.ops("add") == ["x"])
    assert r.list_count == 1
    assert slow.next() == 60.0  # never advanced
