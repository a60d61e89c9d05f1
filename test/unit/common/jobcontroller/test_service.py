"""Services of every kind, ported from v0.5.3's service_test.go (TestAddService) and its fixes
(D4, D21); a TFJob's service body is in ``unit/controller/v1/tensorflow/test_tfjob_service.py``."""


def test_add_service_lowers_expectation_and_enqueues(harness, k):
    job = harness.add_job(k.new_job(worker=1))
    harness.ctr.expectations.expect_creations("default/test-tfjob/worker/services", 1)
    harness.ctr.services.on_add(k.new_service(job, "worker", 0))
    assert harness.ctr.expectations.satisfied_expectations("default/test-tfjob/worker/services")
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)


def test_deleted_service_is_observed_and_recreated(harness, k):
    # v0.5.3's service delete handler was empty: the service came back only at resync (divergence D4).
    from tf_operator.k8s.client import SERVICES

    job = harness.add_job(k.new_job(worker=1))
    harness.add_pods(job, "worker", active=1)
    svc = harness.add_service(k.new_service(job, "worker", 0))
    harness.client.resource(SERVICES).delete("test-tfjob-worker-0", namespace="default")
    harness.service_informer.get_indexer().delete(svc)
    harness.ctr.services.on_delete(svc)
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
    harness.client.clear_actions()
    harness.sync(job)
    assert [s["metadata"]["name"] for s in harness.created("services")] == ["test-tfjob-worker-0"]


def test_service_deletion_is_expected_until_observed(harness, k):
    job = harness.add_job(k.new_job(worker=1))
    svc = harness.add_service(k.new_service(job, "worker", 3))  # out of range
    harness.add_pods(job, "worker", active=1)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    assert harness.deleted("services") == ["test-tfjob-worker-3"]
    key = "default/test-tfjob/worker/services"
    assert not harness.ctr.expectations.satisfied_expectations(key)
    harness.ctr.services.on_delete(svc)
    assert harness.ctr.expectations.satisfied_expectations(key)
