"""The run policy: both placements decoded, round-tripped as written, folded into one policy
(D55), and the defaults of the release a job asks for (D56 to D58)."""

import copy

import pytest

from tf_operator.apis.common.v1.fields import DecodeError
from tf_operator.apis.common.v1.run_policy import (
    DEFAULTS_ANNOTATION,
    DEFAULTS_V0_5_3,
    DEFAULTS_V1_9,
    NormalisedRunPolicy,
    RunPolicy,
    RunPolicyConflictError,
    SchedulingPolicy,
    defaults_for,
    normalise_run_policy,
    other_manager,
)
from tf_operator.apis.tensorflow.v1.types import TFJob

WORKER = {"template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:1"}]}}}

# A TFJob as training-operator v1.9 documents it, every run-policy field set, plus a field of
# a release after v1.9 that must survive the round trip.
V1_9_JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "v19", "namespace": "default"},
    "spec": {
        "runPolicy": {
            "cleanPodPolicy": "None",
            "ttlSecondsAfterFinished": 60,
            "activeDeadlineSeconds": 600,
            "backoffLimit": 3,
            "schedulingPolicy": {
                "minAvailable": 2,
                "queue": "research",
                "minResources": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": 1},
                "priorityClass": "high",
                "scheduleTimeoutSeconds": 30,
            },
            "suspend": True,
            "managedBy": "kubeflow.org/training-operator",
            "laterField": {"kept": True},
        },
        "successPolicy": "AllWorkers",
        "enableDynamicWorker": True,
        "tfReplicaSpecs": {"Worker": copy.deepcopy(WORKER)},
    },
    "status": {"conditions": None, "replicaStatuses": None},
}


def test_min_task_member_round_trips():
    """The operator's addition (D77), beside v1.9's fields."""
    job = copy.deepcopy(V1_9_JOB)
    job["spec"]["runPolicy"]["schedulingPolicy"]["minTaskMember"] = {"Worker": 2}
    decoded = TFJob.from_dict(job)
    assert decoded.spec.run_policy.scheduling_policy.min_task_member == {"Worker": 2}
    assert decoded.to_dict() == job


def test_a_v1_9_job_round_trips_as_written():
    job = TFJob.from_dict(V1_9_JOB)
    assert job.to_dict() == V1_9_JOB
    assert job.spec.success_policy == "AllWorkers" and job.spec.enable_dynamic_worker is True


def test_a_v1_9_job_is_normalised_into_one_policy():
    policy = TFJob.from_dict(V1_9_JOB).run_policy
    assert policy == NormalisedRunPolicy(
        clean_pod_policy="None",
        ttl_seconds_after_finished=60,
        active_deadline_seconds=600,
        backoff_limit=3,
        scheduling_policy=SchedulingPolicy(
            min_available=2,
            queue="research",
            min_resources={"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": 1},
            priority_class="high",
            schedule_timeout_seconds=30,
        ),
        suspend=True,
        managed_by="kubeflow.org/training-operator",
        defaults=DEFAULTS_V0_5_3,
    )


def _spec(run_policy=None, **top_level):
    spec = {"tfReplicaSpecs": {"Worker": copy.deepcopy(WORKER)}, **top_level}
    if run_policy is not None:
        spec["runPolicy"] = run_policy
    return {"metadata": {"name": "j"}, "spec": spec}


@pytest.mark.parametrize(
    "raw, clean, ttl, deadline, backoff",
    [
        pytest.param(_spec(), "Running", None, None, None, id="nothing: v0.5.3 defaults"),
        pytest.param(
            _spec(cleanPodPolicy="All", backoffLimit=2), "All", None, None, 2, id="v0.5.3 only"
        ),
        pytest.param(
            _spec({"ttlSecondsAfterFinished": 5, "activeDeadlineSeconds": 9}),
            "Running",
            5,
            9,
            None,
            id="runPolicy only",
        ),
        pytest.param(
            _spec(
                {"cleanPodPolicy": "None", "backoffLimit": 1},
                backoffLimit=1,
                ttlSecondsAfterFinished=7,
            ),
            "None",
            7,
            None,
            1,
            id="both, equal where both given",
        ),
        pytest.param(_spec({}), "Running", None, None, None, id="empty runPolicy"),
    ],
)
def test_both_placements_fold_into_one_policy(raw, clean, ttl, deadline, backoff):
    job = TFJob.from_dict(raw)
    policy = job.run_policy
    assert (
        policy.clean_pod_policy,
        policy.ttl_seconds_after_finished,
        policy.active_deadline_seconds,
        policy.backoff_limit,
    ) == (clean, ttl, deadline, backoff)
    assert job.to_dict()["spec"] == raw["spec"]  # nothing rewritten


@pytest.mark.parametrize(
    "nested, flat, message",
    [
        (
            {"cleanPodPolicy": "None"},
            {"cleanPodPolicy": "All"},
            "spec.runPolicy.cleanPodPolicy (None) and spec.cleanPodPolicy (All) differ",
        ),
        (
            {"backoffLimit": 1},
            {"backoffLimit": 2},
            "spec.runPolicy.backoffLimit (1) and spec.backoffLimit (2) differ",
        ),
        (
            {"activeDeadlineSeconds": 10},
            {"activeDeadlineSeconds": 20},
            "spec.runPolicy.activeDeadlineSeconds (10) and spec.activeDeadlineSeconds (20)",
        ),
        (
            {"ttlSecondsAfterFinished": 0},
            {"ttlSecondsAfterFinished": 3},
            "spec.runPolicy.ttlSecondsAfterFinished (0) and spec.ttlSecondsAfterFinished (3)",
        ),
    ],
)
def test_different_values_in_both_placements_are_refused(nested, flat, message):
    with pytest.raises(
        RunPolicyConflictError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        TFJob.from_dict(_spec(nested, **flat))


@pytest.mark.parametrize(
    "run_policy, error",
    [
        ({"suspend": "yes"}, "spec.runPolicy.suspend: expected a boolean"),
        ({"backoffLimit": "two"}, "spec.runPolicy.backoffLimit: expected an integer"),
        ({"managedBy": 1}, "spec.runPolicy.managedBy: expected a string"),
        ({"schedulingPolicy": []}, "spec.runPolicy.schedulingPolicy: expected an object"),
        (
            {"schedulingPolicy": {"minResources": {"cpu": [1]}}},
            "spec.runPolicy.schedulingPolicy.minResources.cpu: expected a quantity",
        ),
        (
            {"schedulingPolicy": {"minTaskMember": {"Worker": "2"}}},
            "spec.runPolicy.schedulingPolicy.minTaskMember.Worker: expected an integer",
        ),
        ([], "spec.runPolicy: expected an object"),
    ],
)
def test_malformed_run_policies_name_the_field(run_policy, error):
    with pytest.raises(DecodeError, match=error):
        TFJob.from_dict(_spec(run_policy))


@pytest.mark.parametrize(
    "raw, manager",
    [
        ({}, None),
        ({"spec": None}, None),
        ({"spec": {"runPolicy": {}}}, None),
        ({"spec": {"runPolicy": {"managedBy": "kubeflow.org/training-operator"}}}, None),
        (
            {"spec": {"runPolicy": {"managedBy": "kueue.x-k8s.io/multikueue"}}},
            "kueue.x-k8s.io/multikueue",
        ),
        ({"spec": {"runPolicy": {"managedBy": "someone-else"}}}, "someone-else"),
    ],
)
def test_other_manager(raw, manager):
    """v1.9's ManagedByExternalController, on the undecoded object."""
    assert other_manager(raw) == manager


def test_the_operators_defaults_apply_unless_the_job_asks_for_others():
    plain = _spec()
    assert TFJob.from_dict(plain).run_policy.defaults is DEFAULTS_V0_5_3
    assert TFJob.from_dict(plain, DEFAULTS_V1_9).run_policy.clean_pod_policy == "None"
    asking = copy.deepcopy(plain)
    asking["metadata"]["annotations"] = {DEFAULTS_ANNOTATION: "v1.9"}
    policy = TFJob.from_dict(asking).run_policy
    assert policy.defaults is DEFAULTS_V1_9 and policy.clean_pod_policy == "None"
    asking["metadata"]["annotations"][DEFAULTS_ANNOTATION] = "v0.5.3"
    assert TFJob.from_dict(asking, DEFAULTS_V1_9).run_policy.clean_pod_policy == "Running"


def test_an_unknown_release_is_refused():
    with pytest.raises(DecodeError, match=r"unknown release 'v2': expected v0.5.3 or v1.9"):
        defaults_for({"annotations": {DEFAULTS_ANNOTATION: "v2"}}, DEFAULTS_V0_5_3)


@pytest.mark.parametrize(
    "exit_code, phase, v0_5_3, v1_9",
    [
        (0, "Succeeded", True, True),
        (0, "Running", True, False),  # the container exited 0, the pod not yet Succeeded
        (0xBEEF, "Succeeded", True, False),  # no container status
        (1, "Failed", False, False),
    ],
)
def test_the_index_0_rule(exit_code, phase, v0_5_3, v1_9):
    """v0.5.3 took exit code 0 (we also take phase Succeeded, D22); v1.9 wants both (D58)."""
    assert DEFAULTS_V0_5_3.index0_completed(exit_code, phase) is v0_5_3
    assert DEFAULTS_V1_9.index0_completed(exit_code, phase) is v1_9


def test_normalise_is_kind_independent():
    """What a kind without v0.5.3's top-level fields (a v1.9 PyTorchJob) passes."""
    policy = normalise_run_policy(
        RunPolicy(backoff_limit=4, suspend=False), RunPolicy(), DEFAULTS_V1_9
    )
    assert (policy.backoff_limit, policy.clean_pod_policy, policy.suspend) == (4, "None", False)


def test_a_huge_annotation_is_quoted_short_in_the_error():
    """Its message becomes a condition and an event: a 70 KB value is cut, its length told."""
    huge = "v" * 70_000
    with pytest.raises(DecodeError) as raised:
        defaults_for({"annotations": {DEFAULTS_ANNOTATION: huge}}, DEFAULTS_V0_5_3)
    message = str(raised.value)
    assert len(message) < 300
    assert "... (70002 characters): expected v0.5.3 or v1.9" in message
