"""Leader election against the local API server emulator over HTTP."""

import threading

import pytest

from tf_operator.k8s.leaderelection import EndpointsLock, LeaderCallbacks, LeaderElector, LeaseLock

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("lock_cls", [EndpointsLock, LeaseLock])
def test_two_electors_hand_over_on_release(apiserver_kube, poll_until, lock_cls):
    name = f"it-{lock_cls.__name__.lower()}"
    leaders = []
    stops = {}

    def elector(identity):
        stop = threading.Event()
        stops[identity] = stop
        lock = lock_cls(apiserver_kube, "default", name, identity)
        cb = LeaderCallbacks(lambda _stop: leaders.append(identity), lambda: None)
        e = LeaderElector(lock, cb, lease_duration=3.0, renew_deadline=1.0, retry_period=0.2)
        t = threading.Thread(target=e.run, args=(stop,), daemon=True)
        t.start()
        return t

    ta = elector("a")
    poll_until(lambda: leaders == ["a"])
    tb = elector("b")
    stops["a"].set()
    ta.join(10)
    poll_until(lambda: leaders == ["a", "b"], timeout=5)  # well before the 3 s lease expires
    stops["b"].set()
    tb.join(10)
