"""Ported from v0.5.3's service_test.go (TestAddService) plus service construction and fixes."""


def test_add_service_lowers_expectation_and_enqueues(harness, tfu):
    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.ctr.expectations.expect_creations("default/test-tfjob/worker/services", 1)
    harness.ctr.services.on_add(tfu.new_service(job, "worker", 0))
    assert harness.ctr.expectations.satisfied_expectations("default/test-tfjob/worker/services")
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)


def test_service_body(harness, tfu):
    job = tfu.new_tfjob(worker=1, ps=1)
    job["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "tfjob-port", "containerPort": 3333}
    ]
    job = harness.add_job(job)
    harness.sync(job)
    services = {s["metadata"]["name"]: s for s in harness.created("services")}
    labels = {
        "group-name": "kubeflow.org",
        "tf-job-name": "test-tfjob",
        "tf-replica-type": "ps",
        "tf-replica-index": "0",
    }
    ps = services["test-tfjob-ps-0"]
    # training-operator v1.9's labels beside v0.5.3's, which stay the selector (D63)
    assert ps["metadata"]["labels"] == {
        **labels,
        "training.kubeflow.org/operator-name": "tfjob-controller",
        "training.kubeflow.org/job-name": "test-tfjob",
        "training.kubeflow.org/replica-type": "ps",
        "training.kubeflow.org/replica-index": "0",
    }
    assert ps["metadata"]["ownerReferences"] == [tfu.owner_ref(job)]
    assert ps["spec"] == {
        "clusterIP": "None",
        "selector": labels,
        "ports": [{"name": "tfjob-port", "port": 3333}],
    }
    assert services["test-tfjob-worker-0"]["spec"]["ports"][0]["port"] == 2222


def test_deleted_service_is_observed_and_recreated(harness, tfu):
    # v0.5.3's service delete handler was empty: the service came back only at resync (divergence D4).
    from tf_operator.k8s.client import SERVICES

    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.add_pods(job, "worker", active=1)
    svc = harness.add_service(tfu.new_service(job, "worker", 0))
    harness.client.resource(SERVICES).delete("test-tfjob-worker-0", namespace="default")
    harness.service_informer.get_indexer().delete(svc)
    harness.ctr.services.on_delete(svc)
    assert harness.ctr.work_queue.get() == ("default/test-tfjob", False)
    harness.client.clear_actions()
    harness.sync(job)
    assert [s["metadata"]["name"] for s in harness.created("services")] == ["test-tfjob-worker-0"]


def test_service_deletion_is_expected_until_observed(harness, tfu):
    job = harness.add_job(tfu.new_tfjob(worker=1))
    svc = harness.add_service(tfu.new_service(job, "worker", 3))  # out of range
    harness.add_pods(job, "worker", active=1)
    harness.add_services(job, "worker", 1)
    harness.sync(job)
    assert harness.deleted("services") == ["test-tfjob-worker-3"]
    key = "default/test-tfjob/worker/services"
    assert not harness.ctr.expectations.satisfied_expectations(key)
    harness.ctr.services.on_delete(svc)
    assert harness.ctr.expectations.satisfied_expectations(key)


def test_tfjob_replica_statuses_carry_no_selector(harness, tfu):
    """As training-operator v1.9's TFJob controller (its PyTorchJob's writes one)."""
    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.sync(job)
    assert harness.status(job)["replicaStatuses"] == {"Worker": {}}
