"""TimerQueue ordering, cancellation and re-entrancy on a manual clock."""

from localcluster.kubelet.timers import ManualClock, TimerQueue


def test_timers_fire_in_deadline_order_only_when_due():
    clock = ManualClock()
    timers = TimerQueue(clock)
    fired = []
    timers.call_later(2, lambda: fired.append("b"))
    timers.call_later(1, lambda: fired.append("a"))
    timers.call_later(2, lambda: fired.append("c"))
    assert timers.run_due() == clock.monotonic() + 1
    assert fired == []
    clock.advance(1)
    timers.run_due()
    assert fired == ["a"]
    clock.advance(1)
    assert timers.run_due() is None
    assert fired == ["a", "b", "c"]


def test_cancelled_timers_do_not_fire_and_callbacks_may_schedule_more():
    clock = ManualClock()
    timers = TimerQueue(clock)
    fired = []
    handle = timers.call_later(1, lambda: fired.append("cancelled"))
    handle.cancel()
    timers.call_later(1, lambda: timers.call_later(0, lambda: fired.append("chained")))
    clock.advance(1)
    timers.run_due()
    assert fired == ["chained"]
    assert len(timers) == 0


def test_a_failing_callback_does_not_stop_the_others():
    clock = ManualClock()
    timers = TimerQueue(clock)
    fired = []
    timers.call_later(0, lambda: 1 / 0)
    timers.call_later(0, lambda: fired.append("ok"))
    timers.run_due()
    assert fired == ["ok"]
