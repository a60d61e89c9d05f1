"""The run loop end to end on the fake API, for every kind: real informers, workers, shutdown.

A TFJob's jobs have PS replicas beside their workers, a PyTorchJob's a Master (``SETUPS``)."""

import threading
import time

from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from support.jobkinds import SCHEMES
from tf_operator.app.options import ServerOption
from tf_operator.app.server import controller_configuration
from tf_operator.k8s.client import PODS, SERVICES
from tf_operator.k8s.informers import SharedInformerFactory

# Per kind: a small distributed job (3 replicas) and a larger one (5 replicas).
SETUPS = {
    "tfjob": ({"Worker": 2, "PS": 1}, {"Worker": 3, "PS": 2}),
    "pytorchjob": ({"Master": 1, "Worker": 2}, {"Master": 1, "Worker": 4}),
    "paddlejob": ({"Master": 1, "Worker": 2}, {"Master": 1, "Worker": 4}),
}


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _cached(ctr, key):
    namespace, name = key.split("/")
    return ctr.kind.decode(ctr.job_lister.get(namespace, name), ctr.config.defaults)


def _controller(k, client):
    factory = SharedInformerFactory(client, 0)
    job_informer = factory.for_resource(k.resource)
    config = SCHEMES[k.name].configuration(controller_configuration(ServerOption()))
    ctr = k.new_controller(client, factory, job_informer, FakeRecorder(), config)
    return ctr, factory


def _running(k, client, threadiness):
    ctr, factory = _controller(k, client)
    stop = threading.Event()
    factory.start(stop)
    runner = threading.Thread(target=ctr.run, args=(threadiness, stop))
    runner.start()
    return ctr, stop, runner


def test_run_reconciles_and_drains_on_stop(k):
    client = FakeKubeClient()
    ctr, factory = _controller(k, client)
    stop = threading.Event()
    factory.start(stop)
    client.resource(k.resource).create(k.new_job_with(SETUPS[k.name][0]), namespace="default")
    runner = threading.Thread(target=ctr.run, args=(2, stop))
    runner.start()
    try:

        def settled():
            pods = client.resource(PODS).list(namespace="default")["items"]
            services = client.resource(SERVICES).list(namespace="default")["items"]
            status = client.resource(k.resource).get("test-tfjob", "default").get("status") or {}
            return len(pods) == 3 and len(services) == 3 and status.get("conditions")

        assert wait_for(settled)
        # Informer events arrive and further syncs must not create duplicates.
        assert wait_for(
            lambda: ctr.expectations_met("default/test-tfjob", _cached(ctr, "default/test-tfjob"))
        )
        assert len(client.filter_actions("create", "pods")) == 3
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive()
    assert ctr.work_queue.shutting_down()


def test_run_uses_the_sync_handler_seam(k):
    client = FakeKubeClient()
    ctr, factory = _controller(k, client)
    seen = []
    ctr.sync_handler = lambda key: seen.append(key) or True
    stop = threading.Event()
    factory.start(stop)
    runner = threading.Thread(target=ctr.run, args=(1, stop))
    runner.start()
    try:
        client.resource(k.resource).create(k.new_job(1), namespace="default")
        assert wait_for(lambda: "default/test-tfjob" in seen)
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive()


def test_run_returns_when_stopped_before_caches_sync(k):
    client = FakeKubeClient()
    ctr, _ = _controller(k, client)  # informers never started: caches never sync
    stop = threading.Event()
    stop.set()
    ctr.run(1, stop)
    assert ctr.work_queue.shutting_down()


def test_many_jobs_many_workers_create_each_pod_once(k):
    client = FakeKubeClient()
    ctr, stop, runner = _running(k, client, 4)
    try:
        for i in range(10):
            job = k.new_job_with(SETUPS[k.name][1], name=f"job-{i}")
            client.resource(k.resource).create(job, namespace="default")
        assert wait_for(lambda: len(client.resource(PODS).list(namespace="default")["items"]) == 50)
        assert wait_for(
            lambda: (
                len(ctr.work_queue) == 0
                and all(
                    ctr.expectations_met(f"default/job-{i}", _cached(ctr, f"default/job-{i}"))
                    for i in range(10)
                )
            )
        )
    finally:
        stop.set()
        runner.join(10)
    assert len(client.filter_actions("create", "pods")) == 50
    assert len(client.filter_actions("create", "services")) == 50


def test_exit_code_restart_round_trip(k):
    client = FakeKubeClient()
    job = k.new_job(1)
    job["spec"][k.specs_field]["Worker"]["restartPolicy"] = "ExitCode"
    ctr, stop, runner = _running(k, client, 2)
    pods = client.resource(PODS)
    try:
        client.resource(k.resource).create(job, namespace="default")
        assert wait_for(lambda: len(pods.list(namespace="default")["items"]) == 1)
        pod = pods.get("test-tfjob-worker-0", "default")
        first_uid = pod["metadata"]["uid"]
        pod["status"] = {
            "phase": "Failed",
            "containerStatuses": [
                {"name": k.container, "state": {"terminated": {"exitCode": 137}}}
            ],
        }
        pods.update_status(pod, namespace="default")

        def recreated():
            items = pods.list(namespace="default")["items"]
            return len(items) == 1 and items[0]["metadata"]["uid"] != first_uid

        assert wait_for(recreated)
        assert wait_for(
            lambda: any(
                c["type"] == "Restarting"
                for c in (
                    client.resource(k.resource).get("test-tfjob", "default")["status"] or {}
                ).get("conditions")
                or []
            )
        )
    finally:
        stop.set()
        runner.join(10)
    assert len(client.filter_actions("create", "pods")) == 2
    assert len(client.filter_actions("delete", "pods")) == 1
