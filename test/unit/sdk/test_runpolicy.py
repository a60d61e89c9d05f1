"""A job's run policy as users see it (``tf_operator.sdk.runpolicy``), for any kubeflow kind."""

from tf_operator.sdk import (
    is_managed_elsewhere,
    is_suspended,
    managed_by,
    queue_name,
    suspend_requested,
)
from tf_operator.sdk.runpolicy import run_policy, suspend_patch


def job(run_policy=None, conditions=(), labels=None, spec_field="tfReplicaSpecs") -> dict:
    spec: dict = {spec_field: {}}
    if run_policy is not None:
        spec["runPolicy"] = run_policy
    return {
        "metadata": {"name": "j", "labels": labels or {}},
        "spec": spec,
        "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]},
    }


def test_suspend_asked_and_suspend_done_are_told_apart():
    asked = job({"suspend": True}, [("Created", "True")])
    assert suspend_requested(asked) and not is_suspended(asked)
    done = job({"suspend": True}, [("Created", "True"), ("Suspended", "True")])
    assert suspend_requested(done) and is_suspended(done)
    resuming = job({"suspend": False}, [("Suspended", "True")])
    assert not suspend_requested(resuming) and is_suspended(resuming)
    assert not suspend_requested(job()) and run_policy(job()) == {}


def test_who_manages_the_job():
    assert managed_by(job()) == "kubeflow.org/training-operator"
    assert not is_managed_elsewhere(job({"managedBy": "kubeflow.org/training-operator"}))
    elsewhere = job({"managedBy": "kueue.x-k8s.io/multikueue"}, spec_field="pytorchReplicaSpecs")
    assert is_managed_elsewhere(elsewhere)
    assert managed_by(elsewhere) == "kueue.x-k8s.io/multikueue"


def test_queue_and_patches():
    assert queue_name(job(labels={"kueue.x-k8s.io/queue-name": "team-a"})) == "team-a"
    assert queue_name(job()) is None
    assert suspend_patch(True) == {"spec": {"runPolicy": {"suspend": True}}}
    assert suspend_patch(False) == {"spec": {"runPolicy": {"suspend": False}}}
