"""The informer stack over the real wire path: kubernetes ApiClient -> HTTP -> NDJSON watch,
against the local cluster's API server with its watches ending, compacted and dropped."""

import threading
import time

import pytest

from localcluster.controlplane.emulated import APIServer
from localcluster.testing import BACKENDS
from tf_operator.k8s.cache import (
    Backoff,
    DeletedFinalStateUnknown,
    ListWatch,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    wait_for_cache_sync,
)
from tf_operator.k8s.client import PODS, load_kube_client

pytestmark = pytest.mark.integration

POD_GVR = ("", "v1", "pods")


def pod(name):
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {"app": "tf"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


@pytest.fixture(params=BACKENDS)
def server(request):
    # the test injects its faults inside the emulator (its real variant is skipped)
    assert request.param == "emulated"
    srv = APIServer(host="127.0.0.1", port=0)
    srv.start()
    srv.registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": "ns"}})
    for i in range(5):
        srv.registry.create(POD_GVR, "ns", pod(f"p{i}"))
    yield srv
    srv.stop()


def wait_until(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    gate = threading.Event()
    while not pred():
        assert time.monotonic() < deadline, "condition not met in time"
        gate.wait(0.01)


def watch_requests(server) -> int:
    counts = server.request_metrics.snapshot()
    return sum(n for (_, verb, res, _), n in counts.items() if verb == "watch" and res == "pods")


@pytest.mark.emulator_only(
    reason="drops the emulator's watches, compacts its history and counts its watch requests"
)
def test_informer_over_http_survives_watch_timeouts_410_and_drops(server):
    kc = load_kube_client(master=server.url)
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
    registry = server.registry
    try:
        assert wait_for_cache_sync(stop, informer.has_synced, timeout=10)
        assert len(informer.get_indexer().list()) == 5
        pods = kc.resource(PODS)
        wait_until(lambda: registry.watch_count() == 1)
        # Events across a server-side watch timeout.
        watches_before = watch_requests(server)
        pods.create(pod("new"))
        wait_until(lambda: watch_requests(server) > watches_before)
        pods.delete("p0", "ns")
        wait_until(lambda: informer.get_indexer().get_by_key("ns/p0") is None)
        assert informer.get_indexer().get_by_key("ns/new")["kind"] == "Pod"
        # The watch is dropped, a delete lands and the history is compacted before the client
        # re-watches: its resourceVersion is gone (410), it relists and the missed delete
        # arrives as a tombstone.
        with registry.store.lock:  # hold writers and watchers still while setting the scene
            registry.drop_watches()
            registry.delete(POD_GVR, "ns", "p1")
            registry.compact()
        wait_until(lambda: any(isinstance(o, DeletedFinalStateUnknown) for _, o in events))
        # A dropped connection mid-stream: rewatch and keep going.
        wait_until(lambda: registry.watch_count() == 1)
        server.faults.apply({"drop_watches": True})
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
