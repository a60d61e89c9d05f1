"""The event sink workers under real latency: 8 senders deliver a burst several times faster
than one (a timing check, so it runs with the integration tests)."""

import threading
import time

import pytest

from support.fake_kube import FakeKubeClient
from tf_operator.k8s.client import EVENTS
from tf_operator.k8s.clock import FakeClock
from tf_operator.k8s.record import EventBroadcaster, KubeEventSink

pytestmark = pytest.mark.integration


def tfjob(name, ns="ns1"):
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
    }


def events_in(kube, ns="ns1"):
    return kube.resource(EVENTS).list(namespace=ns)["items"]


def test_bench_burst_with_real_latency_is_several_times_faster_with_8_senders():
    def burst_seconds(workers: int) -> float:
        kube = FakeKubeClient()
        pause = threading.Event()
        kube.prepend_reactor("create", "events", lambda a: (pause.wait(0.005), (False, None))[1])
        b = EventBroadcaster(clock=FakeClock())
        b.start_recording_to_sink(KubeEventSink(kube), workers=workers)
        rec = b.new_recorder("c")
        start = time.monotonic()
        for i in range(200):
            rec.event(tfjob(f"job{i}"), "Normal", "R", "m")
        b.shutdown(timeout=30)
        assert len(events_in(kube)) == 200
        return time.monotonic() - start

    one, eight = burst_seconds(1), burst_seconds(8)
    assert eight * 3 < one, (one, eight)
