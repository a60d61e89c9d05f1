"""What the operator refuses of a TFJob only (D37, D55): v0.5.3's and v1.9's placements of a
run-policy field that disagree, and v1.9's ``successPolicy``. Every kind's invalid jobs (the
report, once, that Failed is final, ports, depth, names) are tested in
``unit/common/jobcontroller/test_invalid.py``."""

import pytest

PREFIX = "Failed to marshal the object to TFJob; the spec is invalid: "


@pytest.mark.parametrize(
    "edit, error",
    [
        pytest.param(
            {"cleanPodPolicy": "All", "runPolicy": {"cleanPodPolicy": "None"}},
            "spec.runPolicy.cleanPodPolicy (None) and spec.cleanPodPolicy (All) differ: give "
            "the field once, or the same value in both places",
            id="conflicting placements (D55)",
        ),
        pytest.param(
            {"successPolicy": "Sometimes"},
            'TFJobSpec is not valid: successPolicy must be "" or AllWorkers (got Sometimes)',
            id="success policy (D37)",
        ),
    ],
)
def test_what_the_crd_refuses_of_v1_9_fields_fails_the_job(harness, tfu, edit, error):
    """On a cluster without the CRD's rules the operator refuses the same (D37, D55)."""
    job = tfu.new_tfjob(1, name="v19-bad")
    job["spec"].update(edit)
    bad = harness.add_job(job)
    assert harness.sync(bad) is True
    assert harness.status(bad)["conditions"][0]["message"] == PREFIX + error
    assert harness.created("pods") == []
