"""The pod and service transforms keep what the reconcilers read and drop the rest."""

from tf_operator.common.jobcontroller.transform import strip_pod, strip_service
from tf_operator.k8s.cache import DeletedFinalStateUnknown
from tf_operator.k8s.cache.delta_fifo import DeltaFIFO

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "j-worker-0",
        "namespace": "ns",
        "uid": "u1",
        "resourceVersion": "7",
        "labels": {"tf-replica-type": "worker", "tf-replica-index": "0"},
        "ownerReferences": [{"kind": "TFJob", "name": "j", "uid": "ju", "controller": True}],
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "deletionTimestamp": "2026-01-01T00:01:00Z",
        "annotations": {"a": "b"},
        "managedFields": [{"manager": "x"}],
    },
    "spec": {"containers": [{"name": "tensorflow", "image": "i", "env": [{"name": "TF_CONFIG"}]}]},
    "status": {
        "phase": "Failed",
        "podIP": "10.0.0.1",
        "conditions": [{"type": "Ready", "status": "False"}],
        "containerStatuses": [
            {
                "name": "tensorflow",
                "restartCount": 2,
                "image": "i",
                "state": {"terminated": {"exitCode": 137}},
            }
        ],
        "initContainerStatuses": [{"name": "init", "restartCount": 1, "imageID": "x"}],
    },
}


def test_strip_pod_keeps_what_is_read_and_is_idempotent():
    stripped = strip_pod(POD)
    assert stripped == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            k: v for k, v in POD["metadata"].items() if k not in ("annotations", "managedFields")
        },
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "tensorflow",
                    "state": {"terminated": {"exitCode": 137}},
                    "restartCount": 2,
                }
            ],
            "initContainerStatuses": [{"name": "init", "restartCount": 1}],
        },
    }
    assert strip_pod(stripped) == stripped
    assert strip_pod({"metadata": {"name": "p"}}) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "status": {},
    }


def test_strip_pod_keeps_why_a_gang_scheduler_has_not_placed_it():
    why = "0/1 nodes are available: 1 rejection in Unreserve."
    pending = {
        "metadata": {"name": "p"},
        "status": {
            "phase": "Pending",
            "conditions": [
                {"type": "Ready", "status": "False"},
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": why,
                },
            ],
        },
    }
    stripped = strip_pod(pending)
    assert stripped["status"]["conditions"] == [
        {"type": "PodScheduled", "status": "False", "message": why}
    ]
    assert strip_pod(stripped) == stripped
    pending["status"]["conditions"][1]["status"] = "True"
    assert "conditions" not in strip_pod(pending)["status"]


def test_strip_service_keeps_metadata_only():
    svc = {"metadata": {"name": "s", "labels": {"a": "b"}, "managedFields": []}, "spec": {"x": 1}}
    assert strip_service(svc) == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "labels": {"a": "b"}},
    }


def test_the_training_operator_labels_are_not_cached():
    """The operator writes them for Kueue and the SDKs and selects nothing by them (D63)."""
    labels = {
        "tf-job-name": "j",
        "training.kubeflow.org/job-name": "j",
        "training.kubeflow.org/replica-type": "worker",
    }
    pod = {"metadata": {"name": "p", "labels": labels}}
    assert strip_pod(pod)["metadata"]["labels"] == {"tf-job-name": "j"}
    assert strip_service(pod)["metadata"]["labels"] == {"tf-job-name": "j"}
    assert pod["metadata"]["labels"] == labels  # the object itself is left alone


def test_delta_fifo_transforms_what_it_queues():
    fifo = DeltaFIFO(transform=strip_pod)
    fifo.add(POD)
    fifo.update(POD)
    fifo.replace([POD], "1")
    deltas = fifo.get_by_key("ns/j-worker-0")
    assert [d.type for d in deltas] == ["Added", "Updated", "Replaced"]
    assert all(d.object == strip_pod(POD) for d in deltas)
    fifo.replace([], "2")  # gone from the list: a tombstone of the transformed object
    tombstone = fifo.get_by_key("ns/j-worker-0")[-1].object
    assert isinstance(tombstone, DeletedFinalStateUnknown) and tombstone.obj == strip_pod(POD)
