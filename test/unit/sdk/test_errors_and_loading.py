"""API errors narrowed to the SDK's classes; TFJobs loaded from what users have."""

import pytest

from tf_operator.k8s.client import errors as k8s_errors
from tf_operator.sdk import errors, load_job, pod_selector
from tf_operator.sdk.client import replica_order


def test_translate_by_reason():
    assert isinstance(errors.translate(k8s_errors.new_not_found("tfjobs", "x")), errors.NotFound)
    exists = errors.translate(k8s_errors.new_already_exists("tfjobs", "x"))
    assert isinstance(exists, errors.AlreadyExists) and isinstance(exists, errors.Conflict)
    conflict = errors.translate(k8s_errors.new_conflict("tfjobs", "x", "stale"))
    assert type(conflict) is errors.Conflict and "stale" in str(conflict)
    other = k8s_errors.new_internal_error("boom")
    assert errors.translate(other) is other


def test_invalid_carries_field_causes():
    body = k8s_errors.status_body(
        422,
        "Invalid",
        'TFJob.kubeflow.org "j" is invalid: spec.x: Invalid value',
        {
            "name": "j",
            "causes": [
                {"field": "spec.x", "reason": "FieldValueInvalid", "message": "Invalid value"},
                {"reason": "FieldValueRequired", "message": "bad"},
            ],
        },
    )
    err = errors.translate(k8s_errors.from_status(body))
    assert isinstance(err, errors.Invalid) and err.status == 422
    assert [str(c) for c in err.causes] == ["spec.x: Invalid value", "bad"]
    assert err.causes[0] == errors.FieldCause("spec.x", "FieldValueInvalid", "Invalid value")
    assert errors.Invalid(422, "Invalid", "no body").causes == []


def test_load_job_from_yaml_and_dict(tmp_path):
    path = tmp_path / "j.yaml"
    path.write_text("metadata: {name: j}\nspec: {}\n")
    assert load_job(path)["kind"] == "TFJob" and load_job(str(path))["apiVersion"] == (
        "kubeflow.org/v1"
    )
    path.write_text("kind: TFJob\n---\nkind: TFJob\n")
    with pytest.raises(ValueError, match="one TFJob document, found 2"):
        load_job(path)
    with pytest.raises(ValueError, match="expected kind TFJob"):
        load_job({"kind": "Pod"})
    # v0.5.3's CRD served v1beta2 beside v1; nothing else is a TFJob version
    assert load_job({"apiVersion": "kubeflow.org/v1beta2"})["apiVersion"] == "kubeflow.org/v1beta2"
    with pytest.raises(
        ValueError, match="expected apiVersion kubeflow.org/v1 or kubeflow.org/v1beta2"
    ):
        load_job({"apiVersion": "kubeflow.org/v2"})
    with pytest.raises(TypeError):
        load_job(42)


def test_pod_selector_and_order():
    assert pod_selector("j") == "group-name=kubeflow.org,tf-job-name=j"
    assert pod_selector("j", "Worker", 0).endswith(",tf-replica-type=worker,tf-replica-index=0")
    pods = [
        {"metadata": {"name": n, "labels": {"tf-replica-type": t, "tf-replica-index": i}}}
        for n, t, i in [
            ("w10", "worker", "10"),
            ("c", "chief", "0"),
            ("w2", "worker", "2"),
            ("p", "ps", "0"),
        ]
    ]
    assert [p["metadata"]["name"] for p in sorted(pods, key=replica_order)] == [
        "p",
        "w2",
        "w10",
        "c",
    ]


def test_the_pytorchjob_kind_selects_and_orders_its_own_pods():
    from tf_operator.sdk import PYTORCHJOB

    assert pod_selector("j", "Worker", 1, PYTORCHJOB) == (
        "group-name=kubeflow.org,pytorch-job-name=j,pytorch-replica-type=worker,"
        "pytorch-replica-index=1"
    )

    def pod(rt, index):
        labels = {"pytorch-replica-type": rt, "pytorch-replica-index": str(index)}
        return {"metadata": {"name": f"j-{rt}-{index}", "labels": labels}}

    pods = [pod("worker", 1), pod("master", 0), pod("worker", 0)]
    ordered = sorted(pods, key=lambda p: replica_order(p, PYTORCHJOB))
    assert [p["metadata"]["name"] for p in ordered] == ["j-master-0", "j-worker-0", "j-worker-1"]
    job = load_job({"metadata": {"name": "j"}, "spec": {}}, PYTORCHJOB)
    assert (job["apiVersion"], job["kind"]) == ("kubeflow.org/v1", "PyTorchJob")
    with pytest.raises(ValueError, match="expected kind PyTorchJob"):
        load_job({"kind": "TFJob", "metadata": {}}, PYTORCHJOB)
