"""Leader election against the local API server emulator over HTTP."""

import threading
import time

import pytest

from tf_operator.k8s.client import load_kube_client
from tf_operator.k8s.leaderelection import EndpointsLock, LeaderCallbacks, LeaderElector, LeaseLock

pytestmark = pytest.mark.integration


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        pause.wait(0.01)


@pytest.fixture(scope="module")
def kube():
    from tf_operator.localcluster.apiserver import APIServer

    server = APIServer(host="127.0.0.1", port=0)
    server.start()
    client = load_kube_client(master=server.url)
    yield client
    client.close()
    server.stop()


@pytest.mark.parametrize("lock_cls", [EndpointsLock, LeaseLock])
def test_two_electors_hand_over_on_release(kube, lock_cls):
    name = f"it-{lock_cls.__name__.lower()}"
    leaders = []
    stops = {}

    def elector(identity):
        stop = threading.Event()
        stops[identity] = stop
        lock = lock_cls(kube, "default", name, identity)
        cb = LeaderCallbacks(lambda _stop: leaders.append(identity), lambda: None)
        e = LeaderElector(lock, cb, lease_duration=3.0, renew_deadline=1.0, retry_period=0.2)
        t = threading.Thread(target=e.run, args=(stop,), daemon=True)
        t.start()
        return t

    ta = elector("a")
    wait_for(lambda: leaders == ["a"])
    tb = elector("b")
    stops["a"].set()
    ta.join(10)
    wait_for(lambda: leaders == ["a", "b"], timeout=5)  # well before the 3 s lease expires
    stops["b"].set()
    tb.join(10)
