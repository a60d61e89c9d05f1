"""Validation, ported from v0.5.3's validation_test.go, plus divergences D6, D8 and D29."""

import pytest

from tf_operator.apis.tensorflow.v1.types import TFJob
from tf_operator.apis.tensorflow.validation.validation import (
    ValidationError,
    validate_v1_tfjob,
    validate_v1_tfjob_spec,
)

GOOD = {"name": "tensorflow", "image": "kubeflow/tf-dist-mnist-test:1.0"}


def _spec(specs):
    return TFJob.from_dict({"metadata": {"name": "j"}, "spec": {"tfReplicaSpecs": specs}}).spec


def _rs(containers, replicas=None):
    out = {"template": {"spec": {"containers": containers}}}
    if replicas is not None:
        out["replicas"] = replicas
    return out


@pytest.mark.parametrize(
    "specs, message",
    [
        # The six rows of v0.5.3's TestValidateV1TFJobSpec; v0.5.3's first message was only
        # "TFJobSpec is not valid" (divergence D8).
        (None, "^TFJobSpec is not valid: tfReplicaSpecs is required$"),
        ({"Worker": _rs([])}, "containers definition expected in Worker"),
        ({"Worker": _rs([{"image": ""}])}, "Image is undefined in the container of Worker"),
        ({"Worker": _rs([{"name": "", "image": "x"}])}, "no container named tensorflow in Worker"),
        ({"Chief": _rs([]), "Master": _rs([])}, "containers definition expected in"),
        ({"Evaluator": _rs([GOOD], replicas=2)}, "more than 1 evaluator found"),
        # Further v0.5.3 rules.
        ({"Worker": None}, "containers definition expected in Worker"),
        ({"Chief": _rs([GOOD]), "Master": _rs([GOOD])}, "more than 1 chief/master found"),
        # Divergence D6: case-insensitive counting, duplicates, unknown types, empty map.
        ({"chief": _rs([GOOD]), "Master": _rs([GOOD])}, "more than 1 chief/master found"),
        ({"evaluator": _rs([GOOD], replicas=3)}, "more than 1 evaluator found"),
        ({"worker": _rs([GOOD]), "Worker": _rs([GOOD])}, "given twice"),
        ({"Foo": _rs([GOOD])}, "unknown replica type Foo"),
        ({}, "at least one replica type"),
        ({"Worker": _rs([GOOD], replicas=-1)}, "must not be negative"),
        # Divergence D37: what the CRD's schema and CEL rules refuse, refused here too.
        ({"Worker": _rs([GOOD], replicas=1001)}, "replicas of Worker must be at most 1000"),
        ({"worker": _rs([GOOD], replicas=2**31 - 1)}, "replicas of worker must be at most 1000"),
        ({"Worker": _rs([GOOD], replicas=2**40)}, "must be at most 1000 .got 1099511627776"),
        ({"Chief": _rs([GOOD], replicas=2)}, "replicas of Chief must be at most 1"),
        ({"Worker": _rs([GOOD], replicas=0)}, "replicas of Worker must be at least 1"),
        ({"PS": _rs([GOOD], replicas=0)}, "replicas of PS must be at least 1"),
        ({"Worker": {**_rs([GOOD]), "restartPolicy": "Sometimes"}}, "restartPolicy of Worker"),
        # Found by test/unit/controller/v1/tensorflow/test_tfjob_fuzz.py.
        ({"Worker": _rs([GOOD, "x"])}, "containers of Worker must be a list of objects"),
        ({"Worker": _rs([GOOD, {"name": 5, "image": "x"}])}, "container name of Worker"),
        ({"Worker": _rs([{**GOOD, "ports": 5}])}, "ports of the tensorflow container of Worker"),
        ({"Worker": _rs([{**GOOD, "ports": ["x"]}])}, "ports of the tensorflow container"),
        ({"Worker": {"template": {"spec": "x"}}}, "containers definition expected in Worker"),
    ],
)
def test_invalid_specs(specs, message):
    with pytest.raises(ValidationError, match=message):
        validate_v1_tfjob_spec(_spec(specs))


def test_evaluator_without_replicas_does_not_crash():
    # v0.5.3 dereferenced a nil pointer here and the operator panicked (divergence D6).
    validate_v1_tfjob_spec(_spec({"Evaluator": _rs([GOOD]), "Worker": _rs([GOOD])}))


def test_valid_spec():
    validate_v1_tfjob_spec(_spec({"PS": _rs([GOOD], 2), "worker": _rs([GOOD], 4)}))


def test_generated_name_too_long():
    job = TFJob.from_dict(
        {"metadata": {"name": "x" * 60}, "spec": {"tfReplicaSpecs": {"Worker": _rs([GOOD], 10)}}}
    )
    with pytest.raises(ValidationError, match="longer than 63"):
        validate_v1_tfjob(job)


@pytest.mark.parametrize(
    "field, value",
    [
        ("backoffLimit", -1),
        ("backoffLimit", 2**31),
        ("activeDeadlineSeconds", -5),
        ("activeDeadlineSeconds", 2**63),
        ("ttlSecondsAfterFinished", -1),
        ("cleanPodPolicy", "Sometimes"),
    ],
)
def test_run_policy_outside_the_crd_bounds(field, value):
    spec = TFJob.from_dict(
        {
            "metadata": {"name": "j"},
            "spec": {field: value, "tfReplicaSpecs": {"Worker": _rs([GOOD])}},
        }
    ).spec
    with pytest.raises(ValidationError, match=field):
        validate_v1_tfjob_spec(spec)


@pytest.mark.parametrize(
    "minimums, problem",
    [
        ({"worker": 1, "PS": 0}, None),  # replica types in any case
        ({"Chief": 1}, "minTaskMember.Chief names no replica type of the job"),
        ({"Worker": -1}, r"minTaskMember.Worker must be within \[0, 2147483647\]"),
    ],
)
def test_min_task_member_names_the_jobs_replica_types(minimums, problem):
    """The operator's minTaskMember (D77), for a job the CRD's rules did not check."""
    spec = TFJob.from_dict(
        {
            "metadata": {"name": "j"},
            "spec": {
                "runPolicy": {"schedulingPolicy": {"minTaskMember": minimums}},
                "tfReplicaSpecs": {"Worker": _rs([GOOD]), "PS": _rs([GOOD])},
            },
        }
    ).spec
    if problem is None:
        validate_v1_tfjob_spec(spec)
    else:
        with pytest.raises(ValidationError, match=problem):
            validate_v1_tfjob_spec(spec)


def test_bounds_are_inclusive():
    validate_v1_tfjob_spec(
        TFJob.from_dict(
            {
                "metadata": {"name": "j"},
                "spec": {
                    "backoffLimit": 0,
                    "activeDeadlineSeconds": 2**63 - 1,
                    "ttlSecondsAfterFinished": 2**31 - 1,
                    "cleanPodPolicy": "None",
                    "tfReplicaSpecs": {
                        "Worker": {**_rs([GOOD], 1000), "restartPolicy": "ExitCode"},
                        "Chief": _rs([GOOD], 1),
                        "Evaluator": _rs([GOOD], 0),
                    },
                },
            }
        ).spec
    )


@pytest.mark.parametrize(
    "name", ["UpperCase", "a b", "-lead", "a_b", "naïve", "my.job", "1job", "job-", ""]
)
def test_names_that_cannot_name_a_service_are_refused(name):
    # v0.5.3 accepted them; their pods, services or events were then refused (issue 13,
    # finding 5), and `my.job` "Succeeded" without services (divergence D37).
    job = TFJob.from_dict(
        {"metadata": {"name": name}, "spec": {"tfReplicaSpecs": {"Worker": _rs([GOOD])}}}
    )
    with pytest.raises(ValidationError, match="DNS-1035"):
        validate_v1_tfjob(job)


@pytest.mark.parametrize("name", ["a", "my-job", "a1", "a--b"])
def test_dns_1035_names_are_accepted(name):
    job = TFJob.from_dict(
        {"metadata": {"name": name}, "spec": {"tfReplicaSpecs": {"Worker": _rs([GOOD])}}}
    )
    validate_v1_tfjob(job)
