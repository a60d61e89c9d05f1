"""Event recording against the local API server emulator over HTTP."""

import pytest

from tf_operator.k8s.client import EVENTS
from tf_operator.k8s.record import EventBroadcaster

pytestmark = pytest.mark.integration


def test_repeated_event_is_patched_on_the_server(apiserver_kube, poll_until):
    broadcaster = EventBroadcaster(apiserver_kube)
    recorder = broadcaster.new_recorder("tf-operator")
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "it-job", "namespace": "default", "uid": "u-1"},
    }

    def mine():
        items = apiserver_kube.resource(EVENTS).list(namespace="default")["items"]
        return [e for e in items if e["involvedObject"].get("name") == "it-job"]

    recorder.event(job, "Normal", "SuccessfulCreatePod", "Created pod: it-job-worker-0")
    poll_until(lambda: len(mine()) == 1)
    recorder.event(job, "Normal", "SuccessfulCreatePod", "Created pod: it-job-worker-0")
    poll_until(lambda: mine() and mine()[0]["count"] == 2)
    assert len(mine()) == 1
    broadcaster.shutdown()
