"""Slow-start batches: 1, 2, 4, ... concurrently; the first failing batch ends the run."""

import threading

from tf_operator.k8s.controller.slow_start import SlowStartBatches


def recorder(fail_at=None):
    lock = threading.Lock()
    started = []

    def call(i):
        def run():
            with lock:
                started.append(i)
            if i == fail_at:
                raise RuntimeError(f"create {i} failed")

        return run

    return call, started


def test_batches_double_and_all_run_when_nothing_fails():
    call, started = recorder()
    batches = SlowStartBatches()
    try:
        assert batches.run([call(i) for i in range(10)]) == []
    finally:
        batches.shutdown()
    assert sorted(started) == list(range(10))
    # batch boundaries: 0 | 1 2 | 3 4 5 6 | 7 8 9 (each batch ends before the next starts)
    assert started[0] == 0 and set(started[1:3]) == {1, 2} and set(started[3:7]) == {3, 4, 5, 6}


def test_a_failed_batch_ends_the_run_after_the_whole_batch():
    call, started = recorder(fail_at=4)
    batches = SlowStartBatches(concurrent=False)
    errors = batches.run([call(i) for i in range(10)])
    assert [str(e) for e in errors] == ["create 4 failed"]
    assert started == [0, 1, 2, 3, 4, 5, 6]  # batch 3..6 completes; 7..9 are skipped


def test_calls_of_a_batch_run_concurrently():
    barrier = threading.Barrier(4, timeout=10)
    calls = [lambda: None, lambda: None, lambda: None] + [barrier.wait for _ in range(4)]
    batches = SlowStartBatches(workers=4)
    try:
        # the last batch of four only completes if its calls wait for each other at once
        assert batches.run(calls) == []
    finally:
        batches.shutdown()


def test_lanes_run_side_by_side_and_a_failed_lane_stops_alone():
    call, started = recorder(fail_at=1)
    other, other_started = recorder()
    batches = SlowStartBatches(concurrent=False)
    errors = batches.run([call(i) for i in range(6)], [other(i) for i in range(6)])
    assert [str(e) for e in errors] == ["create 1 failed"]
    assert started == [0, 1, 2]  # round 1: 0; round 2: 1 2 (fails); 3..5 skipped
    assert other_started == [0, 1, 2, 3, 4, 5]  # rounds: 0 | 1 2 | 3 4 5


def test_errors_come_back_in_call_order_whichever_thread_ran_them():
    barrier = threading.Barrier(4, timeout=10)

    def failing(i):
        def run():
            barrier.wait()  # all four run at once, on four threads
            if i % 2:
                raise RuntimeError(f"create {i} failed")

        return run

    batches = SlowStartBatches(workers=3)
    try:
        results = batches._run_batch([failing(i) for i in range(4)])
    finally:
        batches.shutdown()
    assert [None if r is None else str(r) for r in results] == [
        None,
        "create 1 failed",
        None,
        "create 3 failed",
    ]


def test_a_batch_larger_than_the_helpers_runs_whole_and_the_pool_restarts_after_shutdown():
    call, started = recorder()
    batches = SlowStartBatches(workers=1)
    try:
        assert batches.run([call(i) for i in range(7)]) == []  # batches 1 | 2 | 4, one helper
        batches.shutdown()
        assert batches.run([call(i) for i in range(7, 10)]) == []
    finally:
        batches.shutdown()
    assert sorted(started) == list(range(10))
