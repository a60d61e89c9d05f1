"""The run loop end to end on the fake API: real informers, workers, shutdown."""

import threading
import time

from support.fake_kube import FakeKubeClient
from support.fake_recorder import FakeRecorder
from tf_operator.app.options import ServerOption
from tf_operator.app.server import controller_configuration
from tf_operator.controller.v1.tensorflow import TFJOBS, new_tf_controller
from tf_operator.k8s.client import PODS, SERVICES
from tf_operator.k8s.informers import SharedInformerFactory


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _cached(ctr, key):
    namespace, name = key.split("/")
    return ctr.kind.decode(ctr.job_lister.get(namespace, name))


def _controller(client):
    factory = SharedInformerFactory(client, 0)
    tfjob_informer = factory.for_resource(TFJOBS)
    config = controller_configuration(ServerOption())
    ctr = new_tf_controller(client, factory, tfjob_informer, FakeRecorder(), config)
    return ctr, factory


def test_run_reconciles_and_drains_on_stop(tfu):
    client = FakeKubeClient()
    ctr, factory = _controller(client)
    stop = threading.Event()
    factory.start(stop)
    client.resource(TFJOBS).create(tfu.new_tfjob(worker=2, ps=1), namespace="default")
    runner = threading.Thread(target=ctr.run, args=(2, stop))
    runner.start()
    try:

        def settled():
            pods = client.resource(PODS).list(namespace="default")["items"]
            services = client.resource(SERVICES).list(namespace="default")["items"]
            status = client.resource(TFJOBS).get("test-tfjob", "default").get("status") or {}
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


def test_run_uses_the_sync_handler_seam(tfu):
    client = FakeKubeClient()
    ctr, factory = _controller(client)
    seen = []
    ctr.sync_handler = lambda key: seen.append(key) or True
    stop = threading.Event()
    factory.start(stop)
    runner = threading.Thread(target=ctr.run, args=(1, stop))
    runner.start()
    try:
        client.resource(TFJOBS).create(tfu.new_tfjob(worker=1), namespace="default")
        assert wait_for(lambda: "default/test-tfjob" in seen)
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive()


def test_run_returns_when_stopped_before_caches_sync():
    client = FakeKubeClient()
    ctr, _ = _controller(client)  # informers never started: caches never sync
    stop = threading.Event()
    stop.set()
    ctr.run(1, stop)
    assert ctr.work_queue.shutting_down()


def _running(client, tfu, threadiness):
    ctr, factory = _controller(client)
    stop = threading.Event()
    factory.start(stop)
    runner = threading.Thread(target=ctr.run, args=(threadiness, stop))
    runner.start()
    return ctr, stop, runner


def test_many_jobs_many_workers_create_each_pod_once(tfu):
    client = FakeKubeClient()
    ctr, stop, runner = _running(client, tfu, 4)
    try:
        for i in range(10):
            client.resource(TFJOBS).create(
                tfu.new_tfjob(worker=3, ps=2, name=f"job-{i}"), namespace="default"
            )
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


def test_exit_code_restart_round_trip(tfu):
    client = FakeKubeClient()
    job = tfu.new_tfjob(worker=1)
    job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    ctr, stop, runner = _running(client, tfu, 2)
    pods = client.resource(PODS)
    try:
        client.resource(TFJOBS).create(job, namespace="default")
        assert wait_for(lambda: len(pods.list(namespace="default")["items"]) == 1)
        pod = pods.get("test-tfjob-worker-0", "default")
        first_uid = pod["metadata"]["uid"]
        pod["status"] = {
            "phase": "Failed",
            "containerStatuses": [
                {"name": "tensorflow", "state": {"terminated": {"exitCode": 137}}}
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
                for c in (client.resource(TFJOBS).get("test-tfjob", "default")["status"] or {}).get(
                    "conditions"
                )
                or []
            )
        )
    finally:
        stop.set()
        runner.join(10)
    assert len(client.filter_actions("create", "pods")) == 2
    assert len(client.filter_actions("delete", "pods")) == 1
