import random
import threading
import time

import pytest

from support.fake_clock import FakeClock
from support.fake_kube import FakeKubeClient
from tf_operator.k8s.cache import (
    NAMESPACE_INDEX,
    Backoff,
    DeletedFinalStateUnknown,
    FilteringResourceEventHandler,
    ListWatch,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    label_index_func,
    wait_for_cache_sync,
)
from tf_operator.k8s.client import PODS, new_internal_error


def pod(name, ns="ns", labels=None):
    meta = {"name": name, "namespace": ns, "labels": labels or {}}
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "image": "i"}]}}


def wait_until(pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    gate = threading.Event()
    while not pred():
        assert time.monotonic() < deadline, "condition not met in time"
        gate.wait(0.005)


class Recorder(ResourceEventHandler):
    """Records (kind, name, rv) and lets tests wait for a number of events."""

    def __init__(self):
        self.cond = threading.Condition()
        self.events = []

    def _rec(self, entry):
        with self.cond:
            self.events.append(entry)
            self.cond.notify_all()

    def on_add(self, obj):
        self._rec(("add", obj["metadata"]["name"], obj["metadata"].get("resourceVersion"), obj))

    def on_update(self, old, new):
        self._rec(
            ("update", new["metadata"]["name"], new["metadata"].get("resourceVersion"), (old, new))
        )

    def on_delete(self, obj):
        if isinstance(obj, DeletedFinalStateUnknown):
            self._rec(("tombstone", obj.key, None, obj))
        else:
            self._rec(
                ("delete", obj["metadata"]["name"], obj["metadata"].get("resourceVersion"), obj)
            )

    def wait(self, pred, timeout=30.0):
        with self.cond:
            assert self.cond.wait_for(lambda: pred(self.events), timeout), self.summary()

    def summary(self):
        with self.cond:
            return [(k, n) for k, n, _, _ in self.events]


FAST = dict(backoff=Backoff(0.001, 0.01))


@pytest.fixture
def stop():
    ev = threading.Event()
    yield ev
    ev.set()


def run(informer, stop):
    t = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    t.start()
    return t


def test_events_reach_handlers_after_cache_is_updated(stop):
    fake = FakeKubeClient({PODS: [pod("a"), pod("b", "other")]})
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    synced_rv = int(fake.resource_version)
    seen_in_cache = []
    rec = Recorder()

    class CacheChecker(ResourceEventHandler):
        def on_add(self, obj):
            key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
            seen_in_cache.append(informer.get_indexer().get_by_key(key) is not None)

    informer.add_event_handler(rec)
    informer.add_event_handler(CacheChecker())
    assert not informer.has_synced()
    t = run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    # Synced means the cache is full; handlers hear about it on their own threads.
    assert len(informer.get_indexer().list()) == 2
    rec.wait(lambda ev: len(ev) == 2)
    assert sorted(n for _, n, _, _ in rec.events) == ["a", "b"]
    fake.resource(PODS).patch("a", {"metadata": {"labels": {"x": "y"}}}, "ns")
    fake.resource(PODS).delete("b", "other")
    # an unscheduled pod is deleted in two writes (deletionTimestamp, then removal), as
    # kube-apiserver does
    rec.wait(lambda ev: len(ev) == 5)
    assert rec.summary()[2:] == [("update", "a"), ("update", "b"), ("delete", "b")]
    old, new = rec.events[2][3]
    assert old["metadata"]["labels"] == {} and new["metadata"]["labels"] == {"x": "y"}
    assert [
        o["metadata"]["name"] for o in informer.get_indexer().by_index(NAMESPACE_INDEX, "ns")
    ] == ["a"]
    assert informer.last_sync_resource_version() == str(synced_rv + 3)
    wait_until(lambda: len(seen_in_cache) == 2)
    assert all(seen_in_cache)
    stop.set()
    t.join(5)
    assert not t.is_alive()


def test_relist_that_drops_an_object_delivers_a_tombstone(stop):
    fake = FakeKubeClient({PODS: [pod("a"), pod("b")]})
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    rec = Recorder()
    informer.add_event_handler(rec)
    run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    wait_until(lambda: fake.watch_count() == 1)
    gate = threading.Event()
    fake.prepend_reactor("watch", "pods", lambda a: (gate.wait(5) and False, None))
    fake.end_watches()
    fake.resource(PODS).delete("a", "ns")  # missed: nobody is watching
    fake.compact()  # and the history is gone, so the reflector must relist
    gate.set()
    rec.wait(lambda ev: any(k == "tombstone" for k, *_ in ev))
    tomb = next(e[3] for e in rec.events if e[0] == "tombstone")
    assert tomb.key == "ns/a" and tomb.obj["metadata"]["name"] == "a"
    assert informer.get_indexer().list_keys() == ["ns/b"]
    # "b" was unchanged by the relist: at most a no-change update (as a resync), like client-go.
    for kind, name, _, payload in rec.events:
        if kind == "update":
            old, new = payload
            assert name == "b"
            assert old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]


def test_relist_delivers_changed_objects_as_updates(stop):
    fake = FakeKubeClient({PODS: [pod("a")]})
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    rec = Recorder()
    informer.add_event_handler(rec)
    run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    wait_until(lambda: fake.watch_count() == 1)
    gate = threading.Event()
    fake.prepend_reactor("watch", "pods", lambda a: (gate.wait(5) and False, None))
    fake.end_watches()
    fake.resource(PODS).patch("a", {"metadata": {"labels": {"v": "2"}}}, "ns")
    fake.resource(PODS).create(pod("c"))
    fake.compact()
    gate.set()
    rec.wait(lambda ev: len(ev) == 3)
    assert sorted(rec.summary()[1:]) == [("add", "c"), ("update", "a")]


def test_resync_redelivers_as_update_with_same_object_to_due_handlers(stop):
    clock = FakeClock()
    fake = FakeKubeClient({PODS: [pod("a"), pod("b")]})
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), 0, clock=clock, **FAST)
    resyncing, quiet = Recorder(), Recorder()
    informer.add_event_handler(resyncing, resync_period=10)
    informer.add_event_handler(quiet, resync_period=0)
    run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    assert clock.block_until_waiters(1)
    clock.step(10)
    resyncing.wait(lambda ev: len(ev) == 4)
    updates = resyncing.events[2:]
    assert sorted(e[1] for e in updates) == ["a", "b"]
    assert all(e[0] == "update" and e[3][0] is e[3][1] for e in updates)
    assert clock.block_until_waiters(1)
    clock.step(10)
    resyncing.wait(lambda ev: len(ev) == 6)
    # The handler without resync heard nothing beyond the initial adds.
    quiet.wait(lambda ev: len(ev) >= 2)
    assert quiet.summary() == [("add", "a"), ("add", "b")]


def test_resync_period_is_raised_to_the_minimum_and_check_period_follows():
    informer = SharedIndexInformer(ListWatch(FakeKubeClient().resource(PODS)), 30)
    informer.add_event_handler(Recorder(), resync_period=0.001)
    assert informer.resync_check_period == 1.0


def test_slow_handler_does_not_block_others(stop):
    fake = FakeKubeClient()
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    release = threading.Event()
    slow_started = threading.Event()

    class Slow(ResourceEventHandler):
        def on_add(self, obj):
            slow_started.set()
            release.wait(10)

    fast = Recorder()
    informer.add_event_handler(Slow())
    informer.add_event_handler(fast)
    run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    for i in range(50):
        fake.resource(PODS).create(pod(f"p{i}"))
    fast.wait(lambda ev: len(ev) == 50)
    assert slow_started.wait(30) and not release.is_set()
    release.set()


def test_handler_added_late_gets_current_contents_then_events(stop):
    fake = FakeKubeClient({PODS: [pod("a"), pod("b")]})
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    late = Recorder()
    informer.add_event_handler(late)
    late.wait(lambda ev: len(ev) == 2)
    assert sorted(late.summary()) == [("add", "a"), ("add", "b")]
    fake.resource(PODS).create(pod("c"))
    late.wait(lambda ev: len(ev) == 3)
    assert late.summary()[2] == ("add", "c")
    with pytest.raises(RuntimeError):
        informer.add_indexers({"x": label_index_func("x")})


def test_filtering_handler_turns_updates_into_adds_and_deletes(stop):
    fake = FakeKubeClient({PODS: [pod("a", labels={"app": "tf"})]})
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    rec = Recorder()
    informer.add_event_handler(
        FilteringResourceEventHandler(
            lambda o: o["metadata"].get("labels", {}).get("app") == "tf", rec
        )
    )
    run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    fake.resource(PODS).patch("a", {"metadata": {"labels": {"app": "other"}}}, "ns")
    fake.resource(PODS).create(pod("b", labels={"app": "x"}))
    fake.resource(PODS).patch("b", {"metadata": {"labels": {"app": "tf"}}}, "ns")
    rec.wait(lambda ev: len(ev) == 3)
    assert rec.summary() == [("add", "a"), ("delete", "a"), ("add", "b")]


def test_wait_for_cache_sync_times_out_and_honours_stop(stop):
    fake = FakeKubeClient()
    fake.prepend_reactor("list", "pods", lambda a: (True, new_internal_error("down")))
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    run(informer, stop)
    assert not wait_for_cache_sync(stop, informer.has_synced, timeout=0.1)
    stopped = threading.Event()
    stopped.set()
    assert not wait_for_cache_sync(stopped, lambda: False)
    assert wait_for_cache_sync(stopped, lambda: True)


def test_hammer_no_lost_or_duplicated_events(stop):
    """Writers on several threads, watches cut and broken meanwhile: the handler
    sees every event exactly once, in resourceVersion order per object, and the
    cache ends equal to the server."""
    fake = FakeKubeClient()
    pods = fake.resource(PODS)
    informer = SharedIndexInformer(ListWatch(pods), **FAST)
    rec = Recorder()
    informer.add_event_handler(rec)
    run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    fake.ensure_namespace("ns")
    # The server's own record of every pod event, as the ground truth.
    truth = fake.registry.watch(("", "v1", "pods"), None, fake.resource_version)

    writers, per_writer = 4, 150

    def writer(w):
        rng = random.Random(w)
        for i in range(per_writer):
            name = f"w{w}-{rng.randrange(20)}"
            try:
                op = rng.random()
                if op < 0.45:
                    pods.create(pod(name))
                elif op < 0.85:
                    pods.patch(name, {"metadata": {"labels": {"i": str(i)}}}, "ns")
                else:
                    pods.delete(name, "ns")
            except Exception:  # noqa: BLE001 - AlreadyExists / NotFound are expected
                pass

    def chaos():
        rng = random.Random(99)
        for _ in range(40):
            if rng.random() < 0.5:
                fake.end_watches()
            else:
                fake.break_watches()
            threading.Event().wait(0.002)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    threads.append(threading.Thread(target=chaos))
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    expected = []
    while (item := truth.get(0)) is not None:
        expected.append(item)
    rec.wait(lambda ev: len(ev) >= len(expected), timeout=20)
    # The queue keeps each object's events in order (not the global order across objects).
    got, want = {}, {}
    for kind, name, rv, _ in rec.events:
        got.setdefault(name, []).append((kind, rv))
    kinds = {"ADDED": "add", "MODIFIED": "update", "DELETED": "delete"}
    for etype, obj in expected:
        want.setdefault(obj["metadata"]["name"], []).append(
            (kinds[etype], obj["metadata"]["resourceVersion"])
        )
    assert len(rec.events) == len(expected)
    assert got == want
    server = {
        (p["metadata"]["name"], p["metadata"]["resourceVersion"]) for p in pods.list()["items"]
    }
    cache = {
        (p["metadata"]["name"], p["metadata"]["resourceVersion"])
        for p in informer.get_indexer().list()
    }
    assert cache == server
    assert informer.reflector.list_count == 1


def test_stop_returns_promptly_with_a_busy_handler_and_a_full_queue():
    fake = FakeKubeClient({PODS: [pod(f"p{i}") for i in range(2000)]})
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    release = threading.Event()
    informer.add_event_handler(ResourceEventHandlerFuncs(add=lambda o: release.wait(10)))
    stop = threading.Event()
    t = run(informer, stop)
    wait_until(lambda: fake.watch_count() == 1)
    stop.set()
    t.join(5)
    alive = t.is_alive()
    release.set()
    assert not alive


def test_inline_handler_runs_on_the_delta_thread_in_order(stop):
    fake = FakeKubeClient({PODS: [pod("a")]})
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    threads, names = set(), []

    class Inline(ResourceEventHandler):
        def on_add(self, obj):
            threads.add(threading.current_thread().name)
            names.append(obj["metadata"]["name"])

    informer.add_event_handler(Inline(), inline=True)
    run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    # synced means processed: an inline handler has already seen the listed object
    assert names == ["a"]
    for name in ("b", "c", "d"):
        fake.resource(PODS).create(pod(name))
    deadline = time.monotonic() + 30
    while len(names) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert names == ["a", "b", "c", "d"]
    assert len(threads) == 1 and not any(t.startswith("handler") for t in threads)


def test_the_transform_shapes_listed_and_watched_objects_once(stop):
    fake = FakeKubeClient({PODS: [pod("a")]})
    informer = SharedIndexInformer(ListWatch(fake.resource(PODS)), **FAST)
    calls = []

    def slim(obj):  # drops the spec, counts its calls per object
        calls.append(obj["metadata"]["name"])
        return {"kind": obj.get("kind"), "metadata": obj["metadata"]}

    informer.set_transform(slim)
    rec = Recorder()
    informer.add_event_handler(rec)
    run(informer, stop)
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
    fake.resource(PODS).create(pod("b"))
    rec.wait(lambda ev: len(ev) == 2)
    assert all("spec" not in entry[3] for entry in rec.events)  # handlers see the slim form
    assert all("spec" not in obj for obj in informer.get_indexer().list())
    assert sorted(calls) == ["a", "b"]  # the listed pod and the watched one, once each
