"""Slow-start batches: 1, 2, 4, ... concurrently, off the caller; the first failing batch ends
its lane, and ``done`` gets the errors and the skipped calls."""

import threading

from tf_operator.k8s.controller.slow_start import SlowStartBatches

WAIT = 10.0


def recorder(fail_at=None):
    lock = threading.Lock()
    started = []

    def call(i):
        def run():
            with lock:
                started.append(i)
            if i == fail_at:
                raise RuntimeError(f"create {i} failed")

        run.index = i
        return run

    return call, started


class Outcome:
    """What ``done`` was called with, once it was."""

    def __init__(self):
        self.called = threading.Event()
        self.errors = None
        self.skipped = None

    def __call__(self, errors, skipped):
        assert not self.called.is_set(), "done called twice"
        self.errors = [str(e) for e in errors]
        self.skipped = [call.index for call in skipped]
        self.called.set()

    def wait(self):
        assert self.called.wait(WAIT), "done was never called"
        return self


def test_batches_double_and_all_run_when_nothing_fails():
    call, started = recorder()
    batches = SlowStartBatches()
    outcome = Outcome()
    try:
        batches.submit([[call(i) for i in range(10)]], outcome)
        outcome.wait()
    finally:
        batches.shutdown()
    assert outcome.errors == [] and outcome.skipped == []
    assert sorted(started) == list(range(10))
    # batch boundaries: 0 | 1 2 | 3 4 5 6 | 7 8 9 (each batch ends before the next starts)
    assert started[0] == 0 and set(started[1:3]) == {1, 2} and set(started[3:7]) == {3, 4, 5, 6}


def test_a_failed_batch_ends_the_run_after_the_whole_batch():
    call, started = recorder(fail_at=4)
    batches = SlowStartBatches(concurrent=False)
    outcome = Outcome()
    batches.submit([[call(i) for i in range(10)]], outcome)
    assert outcome.called.is_set()  # in order, before submit returned
    assert outcome.errors == ["create 4 failed"]
    assert started == [0, 1, 2, 3, 4, 5, 6]  # batch 3..6 completes; 7..9 are skipped
    assert outcome.skipped == [7, 8, 9]


def test_submit_returns_before_the_calls_end():
    release = threading.Event()
    batches = SlowStartBatches()
    outcome = Outcome()
    try:
        batches.submit([[lambda: release.wait(WAIT)]], outcome)
        assert not outcome.called.is_set()  # the call is still blocked on a helper
        release.set()
        outcome.wait()
    finally:
        batches.shutdown()
    assert outcome.errors == []


def test_calls_of_a_batch_run_concurrently():
    barrier = threading.Barrier(4, timeout=WAIT)
    calls = [lambda: None, lambda: None, lambda: None] + [barrier.wait for _ in range(4)]
    batches = SlowStartBatches(workers=4)
    outcome = Outcome()
    try:
        # the last batch of four only completes if its calls wait for each other at once
        batches.submit([calls], lambda errors, skipped: outcome(errors, []))
        outcome.wait()
    finally:
        batches.shutdown()
    assert outcome.errors == []


def test_lanes_run_side_by_side_and_a_failed_lane_stops_alone():
    call, started = recorder(fail_at=1)
    other, other_started = recorder()
    batches = SlowStartBatches(concurrent=False)
    outcome = Outcome()
    batches.submit([[call(i) for i in range(6)], [other(i) for i in range(6)]], outcome)
    assert outcome.errors == ["create 1 failed"]
    assert started == [0, 1, 2]  # round 1: 0; round 2: 1 2 (fails); 3..5 skipped
    assert outcome.skipped == [3, 4, 5]
    assert other_started == [0, 1, 2, 3, 4, 5]  # rounds: 0 | 1 2 | 3 4 5


def test_errors_come_back_in_call_order_whichever_thread_ran_them():
    barrier = threading.Barrier(4, timeout=WAIT)

    def failing(i):
        def run():
            barrier.wait()  # all four run at once, on four threads
            if i % 2:
                raise RuntimeError(f"create {i} failed")

        return run

    batches = SlowStartBatches(workers=4)
    outcome = Outcome()
    try:
        calls = [lambda: None] * 3 + [failing(i) for i in range(4)]  # . | . . | 0 1 2 3
        batches.submit([calls], lambda errors, skipped: outcome(errors, []))
        outcome.wait()
    finally:
        batches.shutdown()
    assert outcome.errors == ["create 1 failed", "create 3 failed"]


def test_many_runs_share_the_helpers_and_shutdown_waits_for_them():
    call, started = recorder()
    batches = SlowStartBatches(workers=2)
    outcomes = [Outcome() for _ in range(20)]
    for run, outcome in enumerate(outcomes):
        batches.submit([[call((run, i)) for i in range(7)]], outcome)
    batches.shutdown()  # drains: every submitted run ends before the helpers stop
    assert all(o.called.is_set() and o.errors == [] for o in outcomes)
    assert len(started) == 140
    batches.submit([[call(("again", 0))]], outcomes[0].__class__())  # helpers start again
    batches.shutdown()
    assert ("again", 0) in started


def test_an_empty_submission_is_done_at_once():
    outcome = Outcome()
    SlowStartBatches().submit([[], []], outcome)
    assert outcome.called.is_set() and outcome.errors == [] and outcome.skipped == []


def test_the_oldest_run_finishes_its_slow_start_before_later_runs_start():
    call, started = recorder()
    submitted = threading.Event()

    def first():
        assert submitted.wait(WAIT)  # the later run is queued while this one is in flight
        started.append(("a", 0))

    batches = SlowStartBatches(workers=1)
    a, b = Outcome(), Outcome()
    try:
        batches.submit([[first, call(("a", 1)), call(("a", 2))]], lambda e, s: a(e, []))
        batches.submit([[call(("b", 0))]], lambda e, s: b(e, []))
        submitted.set()
        a.wait(), b.wait()
    finally:
        batches.shutdown()
    # a's rounds 2 and 3 go before b's first (a plain FIFO would run b's first after a's first)
    assert started == [("a", 0), ("a", 1), ("a", 2), ("b", 0)]


def test_an_already_exists_is_reported_but_ends_no_lane():
    """With deterministic names an AlreadyExists concerns one object: the creates after it
    go on (a failed create must not keep the others from being made, pass after pass)."""
    from tf_operator.k8s.client import new_already_exists

    started = []

    def call(i):
        def run():
            started.append(i)
            if i == 1:
                raise new_already_exists("pods", "job-worker-1")

        run.index = i
        return run

    batches = SlowStartBatches(concurrent=False)
    outcome = Outcome()
    batches.submit([[call(i) for i in range(5)]], outcome)
    outcome.wait()
    assert sorted(started) == [0, 1, 2, 3, 4]
    assert outcome.skipped == [] and len(outcome.errors) == 1
    assert "already exists" in outcome.errors[0]
