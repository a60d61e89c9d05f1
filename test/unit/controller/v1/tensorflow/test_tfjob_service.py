"""A TFJob's service: its body, labels and port, and no replica selector written (as v1.9's
TFJob controller); what every kind's services do is in ``unit/common/jobcontroller/test_service.py``."""


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


def test_tfjob_replica_statuses_carry_no_selector(harness, tfu):
    """As training-operator v1.9's TFJob controller (its PyTorchJob's writes one)."""
    job = harness.add_job(tfu.new_tfjob(worker=1))
    harness.sync(job)
    # the pod the pass created is active (D151); no selector beside it
    assert harness.status(job)["replicaStatuses"] == {"Worker": {"active": 1}}
