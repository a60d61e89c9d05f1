"""ExitCode recreations are counted in the job's status before the failed pod is deleted, once
per pod, so a crash or a new leader at any point neither loses nor repeats a count (divergence
D11); backoffLimit is checked against that count."""

import pytest

from tf_operator.k8s.client import PODS, is_conflict, new_internal_error


def _exit_code_job(harness, k, workers=1, **spec):
    job = k.new_job(workers, **spec)
    job["spec"][k.specs_field]["Worker"]["restartPolicy"] = "ExitCode"
    return harness.add_job(job)


def _failed_pod(harness, k, job, index=0, code=137):
    pod = k.new_pod(job, "worker", index, "Failed")
    pod["status"]["containerStatuses"] = [
        {"name": k.container, "state": {"terminated": {"exitCode": code}}}
    ]
    return harness.add_pod(pod)


def _restarts(harness, job):
    return harness.status(job).get("exitCodeRestarts")


def _new_leader(make_harness, harness):
    """A fresh controller (no memory, no expectations) on the same API, its caches filled."""
    successor = make_harness(client=harness.client)
    for raw in harness.job_informer.get_indexer().list():
        successor.job_informer.get_indexer().add(raw)
    for pod in harness.client.resource(PODS).list()["items"]:
        successor.pod_informer.get_indexer().add(pod)
    for svc in harness.service_informer.get_indexer().list():
        successor.service_informer.get_indexer().add(svc)
    return successor


def test_the_count_is_written_before_the_pod_is_deleted(harness, k):
    job = _exit_code_job(harness, k)
    pod = _failed_pod(harness, k, job)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    assert harness.actions() == [
        ("update", k.resource.plural, "test-tfjob"),
        ("delete", "pods", "test-tfjob-worker-0"),  # no live read first (D52)
    ]
    written = harness.client.filter_actions("update", k.resource.plural)[0].body["status"]
    assert written["exitCodeRestarts"] == {"count": 1, "countedPods": [pod["metadata"]["uid"]]}


def test_a_failed_status_write_deletes_nothing_and_counts_nothing(harness, k):
    job = _exit_code_job(harness, k)
    _failed_pod(harness, k, job)
    harness.add_services(job, "worker", 1)
    harness.client.prepend_reactor(
        "update", k.resource.plural, lambda a: (True, new_internal_error("x"))
    )
    with pytest.raises(Exception, match="x"):
        harness.sync(job)
    assert harness.deleted("pods") == []
    assert _restarts(harness, job) is None


def test_a_crash_after_the_write_is_resumed_by_the_next_leader_without_a_second_count(
    harness, make_harness, k
):
    job = _exit_code_job(harness, k)
    pod = _failed_pod(harness, k, job)
    harness.add_services(job, "worker", 1)
    # The pass writes the count, then "crashes": its delete never reaches the server.
    harness.client.prepend_reactor("delete", "pods", lambda a: (True, new_internal_error("gone")))
    with pytest.raises(Exception, match="gone"):
        harness.sync(job)
    assert _restarts(harness, job)["count"] == 1
    successor = _new_leader(make_harness, harness)
    successor.cache_job(successor.stored_job(job))
    successor.client.clear_actions()
    harness.client._reactors.clear()
    successor.sync(job)
    assert successor.deleted("pods") == ["test-tfjob-worker-0"]
    assert successor.actions("update") == []  # the count was already written: no new write
    assert _restarts(harness, job) == {"count": 1, "countedPods": [pod["metadata"]["uid"]]}


def test_a_stale_cache_neither_counts_a_pod_twice_nor_deletes_it_early(harness, k):
    job = _exit_code_job(harness, k)
    pod = _failed_pod(harness, k, job)
    harness.add_services(job, "worker", 1)
    harness.client.prepend_reactor("delete", "pods", lambda a: (True, new_internal_error("x")))
    with pytest.raises(Exception, match="x"):
        harness.sync(job)
    harness.client._reactors.clear()
    # The cache has not seen the written count: the pass waits for it (it would count the
    # pod again and meet a 409 on its stale resourceVersion), deleting nothing.
    harness.client.clear_actions()
    harness.sync(job)
    assert harness.actions() == []
    # From a fresh cache the pod is deleted, and it is still counted once.
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert harness.deleted("pods") == ["test-tfjob-worker-0"]
    assert _restarts(harness, job) == {"count": 1, "countedPods": [pod["metadata"]["uid"]]}


def test_a_count_made_meanwhile_by_another_pass_is_kept(harness, k):
    job = _exit_code_job(harness, k, workers=2)
    pods = [_failed_pod(harness, k, job, 0), _failed_pod(harness, k, job, 1)]
    harness.add_services(job, "worker", 2)
    live = harness.stored_job(job)
    live["status"] = {"exitCodeRestarts": {"count": 5, "countedPods": ["elsewhere"]}}
    harness.client.registry.update(
        ("kubeflow.org", "v1", k.resource.plural), "default", "test-tfjob", live, "status"
    )
    with pytest.raises(Exception) as err:
        harness.sync(job)  # our cache missed that write: 409, nothing deleted
    assert is_conflict(err.value)
    assert harness.deleted("pods") == []
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    restarts = _restarts(harness, job)
    assert restarts["count"] == 7  # the 5 counted elsewhere, and our two pods
    assert sorted(restarts["countedPods"]) == sorted(p["metadata"]["uid"] for p in pods)
    assert sorted(harness.deleted("pods")) == ["test-tfjob-worker-0", "test-tfjob-worker-1"]


def test_counted_pods_that_are_gone_are_forgotten_but_stay_counted(harness, k):
    job = _exit_code_job(harness, k, backoffLimit=5)
    old = _failed_pod(harness, k, job)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    harness.cache_job(harness.stored_job(job))
    harness.pod_informer.get_indexer().delete(old)
    harness.ctr.pods.on_delete(old)
    harness.sync(job)  # creates the replacement
    replacement = harness.client.resource(PODS).get("test-tfjob-worker-0", "default")
    harness.pod_informer.get_indexer().add(replacement)
    harness.ctr.pods.on_add(replacement)
    harness.cache_job(harness.stored_job(job))
    harness.sync(job)
    assert _restarts(harness, job) == {"count": 1}


def test_backoff_limit_is_checked_against_the_written_count(harness, k):
    job = _exit_code_job(harness, k, backoffLimit=2)
    harness.cache_job({**harness.stored_job(job), "status": {"exitCodeRestarts": {"count": 2}}})
    harness.add_pods(job, "worker", active=1)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    failed = [c for c in harness.status(job)["conditions"] if c["type"] == "Failed"]
    assert failed[0]["message"].endswith("has reached the specified backoff limit")
