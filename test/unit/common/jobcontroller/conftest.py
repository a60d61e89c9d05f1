"""The generic reconciler tests run for every job kind (:data:`support.jobkinds.KINDS`): the
``k`` fixture is the kind under test, ``harness`` a controller of it over the fake API
(:class:`support.jobkinds.JobHarness`), ``make_harness`` builds more."""

from __future__ import annotations

import functools

import pytest

from support.jobkinds import KINDS, JobHarness, KindCase


@pytest.fixture(params=KINDS, ids=str)
def k(request) -> KindCase:
    return request.param


@pytest.fixture
def harness(k) -> JobHarness:
    return JobHarness(k)


@pytest.fixture
def make_harness(k):
    return functools.partial(JobHarness, k)
