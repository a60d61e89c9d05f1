"""Tests for the injectable clock."""

import threading
from datetime import timedelta

from support.fake_clock import FakeClock
from tf_operator.k8s.clock import Clock


def _in_thread(fn):
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("value", fn()), daemon=True)
    t.start()
    return t, result


def test_real_clock_wait_returns_when_event_set():
    clock = Clock()
    event = threading.Event()
    event.set()
    assert clock.wait(event, 10) is True
    assert clock.wait(threading.Event(), 0) is False
    assert clock.monotonic() <= clock.monotonic()
    assert clock.now().tzinfo is not None


def test_fake_clock_step_moves_both_readings():
    clock = FakeClock()
    wall, mono = clock.now(), clock.monotonic()
    clock.step(2.5)
    assert clock.now() - wall == timedelta(seconds=2.5)
    assert clock.monotonic() - mono == 2.5
    clock.set_monotonic(mono + 10)
    assert clock.monotonic() == mono + 10


def test_fake_wait_wakes_only_when_time_passes_deadline():
    clock = FakeClock()
    t, result = _in_thread(lambda: clock.wait(threading.Event(), 5))
    assert clock.block_until_waiters(1)
    clock.step(4.9)
    t.join(0.05)
    assert t.is_alive()
    clock.step(0.1)
    t.join(5)
    assert not t.is_alive()
    assert result["value"] is False
    assert not clock.has_waiters()


def test_fake_wait_wakes_when_event_set():
    clock = FakeClock()
    event = threading.Event()
    t, result = _in_thread(lambda: clock.wait(event, None))
    assert clock.block_until_waiters(1)
    event.set()
    t.join(5)
    assert result["value"] is True


def test_fake_wait_until_uses_absolute_deadline():
    clock = FakeClock()
    deadline = clock.monotonic() + 1
    clock.step(1)  # time passes before the wait starts: the wait must not add it on top
    assert clock.wait_until(threading.Event(), deadline) is False


def test_fake_sleep_blocks_until_stepped():
    clock = FakeClock()
    t, _ = _in_thread(lambda: clock.sleep(3))
    assert clock.block_until_waiters(1)
    assert clock.waiters() == 1
    clock.step(3)
    t.join(5)
    assert not t.is_alive()


def test_block_until_waiters_times_out():
    assert FakeClock().block_until_waiters(1, timeout=0.01) is False
