"""Controller expectations: accumulate, lower, TTL expiry, thread safety (divergences D2-D5)."""

import threading

import pytest

from support.fake_clock import FakeClock
from tf_operator.k8s.client import ApiError
from tf_operator.k8s.controller.expectations import ControllerExpectations, ExpectedCreate

KEY = "ns/job/worker/pods"


def test_no_record_is_satisfied():
    assert ControllerExpectations().satisfied_expectations(KEY)


def test_creations_accumulate_until_all_observed():
    exp = ControllerExpectations()
    exp.expect_creations(KEY, 1)
    exp.expect_creations(KEY, 1)
    exp.expect_creations(KEY, 1)
    exp.creation_observed(KEY)
    exp.creation_observed(KEY)
    # v0.5.3 replaced the record on each create, so one observation satisfied it (divergence D2).
    assert not exp.satisfied_expectations(KEY)
    exp.creation_observed(KEY)
    assert exp.satisfied_expectations(KEY)


def test_deletions_are_tracked():
    exp = ControllerExpectations()
    exp.expect_deletions(KEY, 2)
    exp.deletion_observed(KEY)
    assert not exp.satisfied_expectations(KEY)
    exp.deletion_observed(KEY)
    assert exp.satisfied_expectations(KEY)
    assert exp.get(KEY) == (0, 0)


def test_expired_record_counts_as_satisfied():
    clock = FakeClock()
    exp = ControllerExpectations(clock=clock)
    exp.expect_creations(KEY, 1)
    clock.step(299)
    assert not exp.satisfied_expectations(KEY)
    clock.step(2)
    assert exp.satisfied_expectations(KEY)
    assert exp.get(KEY) is None


def test_raise_refreshes_ttl_but_observation_does_not():
    clock = FakeClock()
    exp = ControllerExpectations(clock=clock)
    exp.expect_creations(KEY, 2)
    clock.step(200)
    exp.creation_observed(KEY)
    clock.step(200)
    assert exp.satisfied_expectations(KEY)  # expired: 400 s after the last raise
    exp.expect_creations(KEY, 1)
    clock.step(200)
    assert not exp.satisfied_expectations(KEY)


def test_delete_expectations_with_prefix_only_touches_that_job():
    exp = ControllerExpectations()
    exp.expect_creations("ns/a/worker/pods")
    exp.expect_creations("ns/a/ps/services")
    exp.expect_creations("ns/ab/worker/pods")
    exp.delete_expectations_with_prefix("ns/a/")
    assert exp.get("ns/a/worker/pods") is None
    assert exp.get("ns/a/ps/services") is None
    assert exp.get("ns/ab/worker/pods") == (1, 0)


def test_concurrent_raises_and_observations_balance():
    exp = ControllerExpectations()
    n, threads = 500, 8
    barrier = threading.Barrier(threads * 2)

    def raiser():
        barrier.wait()
        for _ in range(n):
            exp.expect_creations(KEY, 1)

    def observer():
        barrier.wait()
        for _ in range(n):
            exp.creation_observed(KEY)

    exp.expect_creations(KEY, 0)
    workers = [threading.Thread(target=raiser) for _ in range(threads)]
    workers += [threading.Thread(target=observer) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(10)
    add, _ = exp.get(KEY)
    # Observations that ran before a matching raise may not lower below zero (clamped).
    assert 0 <= add <= n * threads


def test_a_failed_create_lowers_its_expectation_and_a_timed_out_one_keeps_it():
    exp = ControllerExpectations()

    def fails():
        raise RuntimeError("quota")

    def times_out():
        raise ApiError(504, "Timeout", "timeout")

    def queued(create):
        exp.expect_creations(KEY)  # raised when the create is queued
        return ExpectedCreate(exp, KEY, create)

    with pytest.raises(RuntimeError, match="quota"):
        queued(fails)()
    assert exp.get(KEY) == (0, 0)
    queued(times_out)()  # the object may still appear: no error, the expectation stays
    assert exp.get(KEY) == (1, 0)
    queued(lambda: None)()
    assert exp.get(KEY) == (2, 0)
    queued(lambda: None).skip()  # skipped after a failed batch: lowered
    assert exp.get(KEY) == (2, 0)


def test_a_delete_that_deleted_nothing_or_failed_lowers_its_expectation():
    exp = ControllerExpectations()
    assert exp.run_expected_delete(KEY, lambda: True)
    assert exp.get(KEY) == (0, 1)
    assert not exp.run_expected_delete(KEY, lambda: False)
    assert exp.get(KEY) == (0, 1)

    def fails():
        raise RuntimeError("forbidden")

    with pytest.raises(RuntimeError, match="forbidden"):
        exp.run_expected_delete(KEY, fails)
    assert exp.get(KEY) == (0, 1)
