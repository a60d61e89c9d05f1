"""Sample-controller style harness for the TFJob controller (:mod:`support.jobkinds`).

Objects are created in a FakeKubeClient (so live GETs, deletes and status writes work) and the
stored copies are preloaded into the informers' indexers; informers are never started. A test
runs one sync and inspects the exact API actions, events and the written status.
"""

from __future__ import annotations

import pytest

from support.jobkinds import (
    RUN_POLICY_FIELDS,
    START,
    TEST_IMAGE,
    TEST_NAME,
    TFJOB_CASE,
    JobHarness,
)


def replica_template() -> dict:
    return TFJOB_CASE.replica_template()


def new_tfjob(
    worker: int = 1,
    ps: int = 0,
    chief: int = 0,
    evaluator: int = 0,
    name: str = TEST_NAME,
    namespace: str = "default",
    run_policy_in: str = "spec",
    **spec: object,
) -> dict:
    """A TFJob dict like v0.5.3's testutil.NewTFJob/NewTFJobWithChief/...WithEvaluator; with
    ``run_policy_in="runPolicy"`` the run-policy fields go where v1.9 puts them."""
    if run_policy_in == "runPolicy":
        spec["runPolicy"] = {k: spec.pop(k) for k in RUN_POLICY_FIELDS if k in spec}
    specs: dict = {}
    for rtype, count in (("Worker", worker), ("PS", ps), ("Evaluator", evaluator)):
        if count > 0:
            specs[rtype] = {"replicas": count, "template": replica_template()}
    if chief:
        specs["Chief"] = {"template": replica_template()}  # replicas defaulted to 1
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"tfReplicaSpecs": specs, **spec},
    }


owner_ref = TFJOB_CASE.owner_ref
job_labels = TFJOB_CASE.job_labels
new_pod = TFJOB_CASE.new_pod
new_service = TFJOB_CASE.new_service


class Harness(JobHarness):
    """The TFJob controller's harness (:class:`support.jobkinds.JobHarness`)."""

    def __init__(self, **options: object) -> None:
        super().__init__(TFJOB_CASE, **options)
        self.tfjob_informer = self.job_informer


@pytest.fixture
def harness() -> Harness:
    return Harness()


@pytest.fixture
def make_harness():
    return Harness


@pytest.fixture
def tfu():
    """The builders above, for test modules (conftest is not importable in importlib mode)."""
    import types

    return types.SimpleNamespace(
        new_tfjob=new_tfjob,
        new_pod=new_pod,
        new_service=new_service,
        owner_ref=owner_ref,
        job_labels=job_labels,
        replica_template=replica_template,
        START=START,
        TEST_IMAGE=TEST_IMAGE,
        TEST_NAME=TEST_NAME,
    )
