"""Cross-check against an API server (the real wire format), on both control planes."""

import threading
import time
from collections.abc import Iterator

import pytest

from localcluster.testing import BACKENDS
from test.integration.k8s.conftest import ControlPlane, start_control_plane
from tf_operator.k8s.cache import Backoff
from tf_operator.k8s.client import PODS
from tf_operator.k8s.informers import SharedInformerFactory

pytestmark = pytest.mark.integration

POD_SPEC = {"containers": [{"name": "c", "image": "busybox"}]}


@pytest.fixture(scope="module", params=BACKENDS)
def control_plane(request) -> Iterator[ControlPlane]:
    """The emulator sends its bookmarks every 0.2 s here (kube-apiserver at its own pace)."""
    yield from start_control_plane(request.param, bookmark_interval=0.2)


@pytest.fixture
def namespace(control_plane) -> str:
    ns = control_plane.namespace()
    for i in range(5):
        control_plane.api.create(
            ("", "v1", "pods"), ns, {"metadata": {"name": f"p{i}"}, "spec": POD_SPEC}
        )
    return ns


def test_pod_informer_against_an_apiserver(control_plane, namespace):
    kc = control_plane.kube()
    factory = SharedInformerFactory(kc, 0, namespace=namespace, min_watch_timeout=1.0)
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
        pods.create({"metadata": {"name": "new"}, "spec": POD_SPEC}, namespace)
        pods.delete("p0", namespace, grace_period_seconds=0)
        with cond:
            assert cond.wait_for(lambda: ("delete", "p0") in seen and ("add", "new") in seen, 10)
        # Outlive at least one server-side watch timeout (1-2 s), then write again.
        reflector = informer.reflector
        deadline = time.monotonic() + 10
        while reflector.watch_count < 2:
            assert time.monotonic() < deadline, "the watch was never renewed"
            stop.wait(0.01)
        pods.create({"metadata": {"name": "later"}, "spec": POD_SPEC}, namespace)
        with cond:
            assert cond.wait_for(lambda: ("add", "later") in seen, 10)
        assert reflector.list_count == 1
        keys = sorted(informer.get_indexer().list_keys())
        items = pods.list(namespace)["items"]
        assert keys == sorted(f"{namespace}/{p['metadata']['name']}" for p in items)
    finally:
        stop.set()
        factory.join(5)
        kc.close()
