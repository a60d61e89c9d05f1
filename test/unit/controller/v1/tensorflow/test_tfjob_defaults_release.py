"""Where training-operator v1.9 changed a v0.5.3 default, v0.5.3's holds unless the operator
runs with ``--defaults=v1.9`` or the job carries ``tf-operator.kubeflow.org/defaults: v1.9``
(which wins either way): divergences D56 to D60."""

import pytest

ANNOTATION = "tf-operator.kubeflow.org/defaults"

# (operator flag, job annotation or None) -> whose defaults the job gets
CHOICES = [
    pytest.param("v0.5.3", None, "v0.5.3", id="operator v0.5.3"),
    pytest.param("v1.9", None, "v1.9", id="operator v1.9"),
    pytest.param("v0.5.3", "v1.9", "v1.9", id="job asks v1.9"),
    pytest.param("v1.9", "v0.5.3", "v0.5.3", id="job asks v0.5.3 of a v1.9 operator"),
]


def _job(tfu, annotation, **kwargs):
    job = tfu.new_tfjob(**kwargs)
    if annotation is not None:
        job["metadata"]["annotations"] = {ANNOTATION: annotation}
    return job


def _succeeded(tfu):
    t = "2026-01-01T12:00:00Z"
    condition = {"type": "Succeeded", "status": "True", "reason": "TFJobSucceeded"}
    return {"conditions": [{**condition, "lastUpdateTime": t, "lastTransitionTime": t}]}


@pytest.mark.parametrize("flag, annotation, release", CHOICES)
def test_clean_pod_policy_default(make_harness, tfu, flag, annotation, release):
    """D56: a finished job's running PS is deleted under Running (v0.5.3's default), kept
    under None (v1.9's)."""
    harness = make_harness(defaults=flag)
    job = harness.add_job(_job(tfu, annotation, worker=1, ps=1), status=_succeeded(tfu))
    harness.add_pods(job, "worker", succeeded=1)
    harness.add_pods(job, "ps", active=1)
    harness.sync(job)
    assert harness.deleted("pods") == ([] if release == "v1.9" else ["test-tfjob-ps-0"])


def test_a_written_clean_pod_policy_holds_whatever_the_defaults(make_harness, tfu):
    harness = make_harness(defaults="v1.9")
    job = tfu.new_tfjob(worker=1, ps=1, run_policy_in="runPolicy", cleanPodPolicy="Running")
    job = harness.add_job(job, status=_succeeded(tfu))
    harness.add_pods(job, "ps", active=1)
    harness.sync(job)
    assert harness.deleted("pods") == ["test-tfjob-ps-0"]


def _exited(tfu, job, phase, exit_code):
    pod = tfu.new_pod(job, "worker", 0, phase)
    pod["status"]["containerStatuses"] = [
        {"name": "tensorflow", "state": {"terminated": {"exitCode": exit_code}}}
    ]
    return pod


@pytest.mark.parametrize("flag, annotation, release", CHOICES)
def test_exit_code_139_is_retried_only_with_v1_9_defaults(
    make_harness, tfu, flag, annotation, release
):
    """D57: a segfault under restartPolicy ExitCode."""
    harness = make_harness(defaults=flag)
    job = _job(tfu, annotation, worker=1)
    job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    job = harness.add_job(job)
    harness.add_pod(_exited(tfu, job, "Failed", 139))
    harness.sync(job)
    types = {t for t, status, _ in harness.conditions(job) if status == "True"}
    if release == "v1.9":
        assert "Restarting" in types and "Failed" not in types
        assert harness.deleted("pods") == ["test-tfjob-worker-0"]
    else:
        assert "Failed" in types and harness.deleted("pods") == []


@pytest.mark.parametrize("flag, annotation, release", CHOICES)
def test_worker_0_rule(make_harness, tfu, flag, annotation, release):
    """D58: worker 0's container exited 0 but the pod still runs (a sidecar)."""
    harness = make_harness(defaults=flag)
    job = harness.add_job(_job(tfu, annotation, worker=2))
    harness.add_pod(_exited(tfu, job, "Running", 0))
    harness.add_pods(job, "worker", active=0)
    harness.sync(job)
    succeeded = ("Succeeded", "True", "TFJobSucceeded") in harness.conditions(job)
    assert succeeded is (release == "v0.5.3")
