"""Event recording against the local API server emulator over HTTP."""

import threading
import time

import pytest

from tf_operator.k8s.client import EVENTS, load_kube_client
from tf_operator.k8s.record import EventBroadcaster

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


def test_repeated_event_is_patched_on_the_server(kube):
    broadcaster = EventBroadcaster(kube)
    recorder = broadcaster.new_recorder("tf-operator")
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "it-job", "namespace": "default", "uid": "u-1"},
    }

    def mine():
        items = kube.resource(EVENTS).list(namespace="default")["items"]
        return [e for e in items if e["involvedObject"].get("name") == "it-job"]

    recorder.event(job, "Normal", "SuccessfulCreatePod", "Created pod: it-job-worker-0")
    wait_for(lambda: len(mine()) == 1)
    recorder.event(job, "Normal", "SuccessfulCreatePod", "Created pod: it-job-worker-0")
    wait_for(lambda: mine() and mine()[0]["count"] == 2)
    assert len(mine()) == 1
    broadcaster.shutdown()
