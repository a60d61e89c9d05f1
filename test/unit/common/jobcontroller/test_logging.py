"""Every line the job controller and its writes log names the kind it runs for (D83), for a
TFJob as for a PyTorchJob, beside v0.5.3's fields; a line about a job keeps ``job`` and
``uid``, a replica's ``replica-type``."""

import io
import json
import logging
import threading

import pytest

from tf_operator import logger
from tf_operator.k8s.client import new_internal_error

# The operator's code under test: lines logged from anywhere else are not the controller's.
CONTROLLER_DIRS = ("jobcontroller/", "control/", "tensorflow/", "pytorch/")


@pytest.fixture
def json_lines():
    """The JSON lines logged at DEBUG while the test runs (the operator's own formatter)."""
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    stream = io.StringIO()
    logger.configure_logging(json_format=True, level=logging.DEBUG)
    root.handlers[0].setStream(stream)

    def lines():
        logger.flush_logs()
        return [json.loads(line) for line in stream.getvalue().splitlines()]

    yield lines
    root.handlers[:] = saved_handlers
    root.setLevel(saved_level)


def _exercise(harness, k):
    """Handlers, passes that create, restart, delete, fail and finish, and the run loop."""
    ctr = harness.ctr
    job = harness.add_job(k.new_job(2))
    ctr.job_events.on_add(job)
    ctr.job_events.on_update(job, {**job, "metadata": {**job["metadata"], "resourceVersion": "9"}})
    harness.sync(job)  # creates the pods and services
    restarts = k.new_job(2, name="restarts")
    restarts["spec"][k.specs_field]["Worker"]["restartPolicy"] = "ExitCode"
    restarts = harness.add_job(restarts)
    failed = k.new_pod(restarts, "worker", 0, "Failed")
    failed["status"]["containerStatuses"] = [
        {"name": k.container, "state": {"terminated": {"exitCode": 137}}}
    ]
    harness.add_pod(failed)
    harness.add_pod(k.new_pod(restarts, "worker", 7, "Running"))  # out of range: deleted
    terminating = harness.add_pod(k.new_pod(restarts, "worker", 9, "Running"), cache=False)
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # as the cache has it
    harness.pod_informer.get_indexer().add(terminating)
    harness.add_services(restarts, "worker", 2)
    harness.sync(restarts)  # a restart and a pod out of range
    bad = k.new_job(1, name="bad")
    bad["spec"][k.specs_field]["Worker"]["replicas"] = "three"
    harness.sync(harness.add_job(bad))  # an invalid job
    ctr.sync_handler = lambda key: (_ for _ in ()).throw(new_internal_error("boom"))
    ctr.work_queue.add("default/bad")
    ctr.process_next_work_item()  # a failed sync
    harness.job_informer.get_indexer().delete(harness.stored_job(job))
    harness.sync(job)  # a deleted job
    stop = threading.Event()
    stop.set()
    ctr.run(1, stop)  # stopped before the caches synced


def test_every_line_of_the_controller_names_its_kind(harness, k, json_lines):
    _exercise(harness, k)
    ours = [line for line in json_lines() if line["filename"].startswith(CONTROLLER_DIRS)]
    assert [line for line in ours if line.get("kind") != k.kind_name] == []
    messages = " | ".join(line["msg"] for line in ours)
    for said in (
        "is created.",
        f"Updating {k.kind_name.lower()}",
        f"Reconcile {k.kind_name}s test-tfjob",
        "Need to restart the pod",
        "is terminating, skip deleting",
        "its index is out of range",
        "expected an integer, got 'three'",
        "error syncing",
        "has been deleted",
        f"Starting {k.kind_name} controller",
        "Finished syncing",
    ):
        assert said in messages, said
    about_jobs = [line for line in ours if line.get("job")]
    assert {line["job"] for line in about_jobs} == {
        "default.test-tfjob",
        "default.restarts",
        "default.bad",
    }
    replica_lines = [line for line in about_jobs if "replica-type" in line]
    assert replica_lines and {line["replica-type"] for line in replica_lines} == {"worker"}
