"""The informer stack over the real wire path: kubernetes ApiClient -> HTTP -> NDJSON watch."""

import threading
import time

import pytest

from tf_operator.k8s.cache import (
    Backoff,
    DeletedFinalStateUnknown,
    ListWatch,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    wait_for_cache_sync,
)
from tf_operator.k8s.client import PODS, FakeKubeClient, new_resource_expired
from tf_operator.k8s.client.fakeserver import FakeAPIServer, kube_client_for

pytestmark = pytest.mark.integration


def pod(name):
    return {"metadata": {"name": name, "namespace": "ns", "labels": {"app": "tf"}}}


@pytest.fixture
def server():
    fake = FakeKubeClient({PODS: [pod(f"p{i}") for i in range(5)]})
    with FakeAPIServer(fake, [PODS]) as srv:
        yield srv


def wait_until(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    gate = threading.Event()
    while not pred():
        assert time.monotonic() < deadline, "condition not met in time"
        gate.wait(0.01)


def test_informer_over_http_survives_watch_timeouts_410_and_drops(server):
    kc = kube_client_for(server.url)
    # A 1-2 s server-side watch timeout: the watch ends mid-test and must resume.
    informer = SharedIndexInformer(
        ListWatch(kc.resource(PODS), label_selector="app=tf"),
        min_watch_timeout=1.0,
        backoff=Backoff(0.01, 0.05),
        expected_kind="Pod",
        expected_api_version="v1",
    )
    events = []
    lock = threading.Lock()

    def rec(kind):
        def fn(*args):
            with lock:
                events.append((kind, args[-1]))

        return fn

    informer.add_event_handler(
        ResourceEventHandlerFuncs(add=rec("add"), update=rec("update"), delete=rec("delete"))
    )
    stop = threading.Event()
    t = threading.Thread(target=informer.run, args=(stop,), daemon=True)
    t.start()
    try:
        assert wait_for_cache_sync(stop, informer.has_synced, timeout=10)
        assert len(informer.get_indexer().list()) == 5
        pods = kc.resource(PODS)
        wait_until(lambda: server.fake.watch_count() == 1)
        # Events across a server-side watch timeout.
        watches_before = len(server.fake.filter_actions("watch"))
        pods.create(pod("new"))
        wait_until(lambda: len(server.fake.filter_actions("watch")) > watches_before)
        pods.delete("p0", "ns")
        wait_until(lambda: informer.get_indexer().get_by_key("ns/p0") is None)
        assert informer.get_indexer().get_by_key("ns/new")["kind"] == "Pod"
        # An ERROR 410 event in the stream: relist; a delete missed meanwhile -> tombstone.
        server.fake.prepend_reactor("watch", "pods", lambda a: (False, None))
        gate = threading.Event()
        server.fake.prepend_reactor("watch", "pods", lambda a: (gate.wait(5) and False, None))
        server.fake.send_watch_error(new_resource_expired().body)
        pods.delete("p1", "ns")
        server.fake.compact()
        gate.set()
        wait_until(lambda: any(isinstance(o, DeletedFinalStateUnknown) for _, o in events))
        # A dropped connection mid-stream: rewatch and keep going.
        wait_until(lambda: server.fake.watch_count() == 1)
        server.fake.break_watches()
        pods.create(pod("after-drop"))
        wait_until(lambda: informer.get_indexer().get_by_key("ns/after-drop") is not None)
        keys = sorted(informer.get_indexer().list_keys())
        server_keys = sorted(f"ns/{p['metadata']['name']}" for p in pods.list()["items"])
        assert keys == server_keys
    finally:
        stop.set()
        t.join(5)
        kc.close()
    assert not t.is_alive()
