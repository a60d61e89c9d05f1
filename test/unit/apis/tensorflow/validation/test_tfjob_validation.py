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
