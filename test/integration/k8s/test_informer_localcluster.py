"""Cross-check against the local cluster's API server emulator (the real wire format)."""

import threading
import time

import pytest

from tf_operator.k8s.cache import Backoff
from tf_operator.k8s.client import PODS, load_kube_client
from tf_operator.k8s.informers import SharedInformerFactory

apiserver = pytest.importorskip("localcluster.controlplane.emulated")
pytestmark = pytest.mark.integration

POD_SPEC = {"containers": [{"name": "c", "image": "busybox"}]}


@pytest.fixture
def server():
    srv = apiserver.APIServer(bookmark_interval=0.2)
    srv.start()
    srv.registry.create(("", "v1", "namespaces"), None, {"metadata": {"name": "t"}})
    for i in range(5):
        srv.registry.create(
            ("", "v1", "pods"), "t", {"metadata": {"name": f"p{i}"}, "spec": POD_SPEC}
        )
    yield srv
    srv.stop()


def test_pod_informer_against_emulated_apiserver(server):
    kc = load_kube_client(master=server.url)
    factory = SharedInformerFactory(kc, 0, namespace="t", min_watch_timeout=1.0)
    informer = factory.pods()
    informer.backoff = Backoff(0.01, 0.1)
    seen = []
    cond = threading.Condition()

    class Handler:
        def on_add(self, obj):
            with cond:
                seen.append(("add", obj["metadata"]["name"]))
                cond.notify_all()

        def on_update(self, old, new):
            pass

        def on_delete(self, obj):
            with cond:
                seen.append(("delete", obj["metadata"]["name"]))
                cond.notify_all()

    informer.add_event_handler(Handler())
    stop = threading.Event()
    factory.start(stop)
    try:
        assert factory.wait_for_cache_sync(stop, timeout=10) == {PODS: True}
        pods = kc.resource(PODS)
        pods.create({"metadata": {"name": "new"}, "spec": POD_SPEC}, "t")
        pods.delete("p0", "t", grace_period_seconds=0)
        with cond:
            assert cond.wait_for(lambda: ("delete", "p0") in seen and ("add", "new") in seen, 10)
        # Outlive at least one server-side watch timeout (1-2 s), then write again.
        reflector = informer.reflector
        deadline = time.monotonic() + 10
        while reflector.watch_count < 2:
            assert time.monotonic() < deadline, "the watch was never renewed"
            stop.wait(0.01)
        pods.create({"metadata": {"name": "later"}, "spec": POD_SPEC}, "t")
        with cond:
            assert cond.wait_for(lambda: ("add", "later") in seen, 10)
        assert reflector.list_count == 1
        keys = sorted(informer.get_indexer().list_keys())
        assert keys == sorted(f"t/{p['metadata']['name']}" for p in pods.list("t")["items"])
    finally:
        stop.set()
        factory.join(5)
        kc.close()
