"""Several controllers run as one: stopped together, and a failure stops the others."""

import threading

import pytest

from tf_operator.app.group import ControllerGroup, ControllerStoppedError


class Member:
    def __init__(self, fail: BaseException | None = None, returns: bool = False):
        self.fail = fail
        self.returns = returns
        self.started = threading.Event()
        self.drained = threading.Event()
        self.threadiness = None

    def run(self, threadiness, stop_event):
        self.threadiness = threadiness
        self.started.set()
        try:
            if self.fail is not None:
                raise self.fail
            if not self.returns:
                stop_event.wait()
        finally:
            self.drained.set()


def run_in_thread(group, stop):
    outcome = {}

    def target():
        try:
            group.run(3, stop)
            outcome["ok"] = True
        except ControllerStoppedError as err:
            outcome["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def test_every_member_runs_and_all_drain_on_stop():
    members = [Member(), Member()]
    stop = threading.Event()
    thread, outcome = run_in_thread(ControllerGroup([("a", members[0]), ("b", members[1])]), stop)
    assert all(m.started.wait(5) for m in members)
    assert not any(m.drained.is_set() for m in members)
    stop.set()
    thread.join(5)
    assert outcome == {"ok": True}
    assert all(m.drained.is_set() and m.threadiness == 3 for m in members)


@pytest.mark.parametrize(
    ("failing", "message"),
    [
        (Member(fail=RuntimeError("caches never synced")), "the b controller failed: caches"),
        (Member(returns=True), "the b controller stopped unexpectedly"),
    ],
)
def test_a_member_that_ends_on_its_own_stops_the_others(failing, message):
    healthy = Member()
    stop = threading.Event()
    thread, outcome = run_in_thread(ControllerGroup([("a", healthy), ("b", failing)]), stop)
    thread.join(5)
    assert not thread.is_alive()
    assert message in str(outcome["error"])
    assert healthy.drained.is_set()
    assert not stop.is_set()  # the caller's event is the caller's to set


def test_one_member_runs_on_the_callers_thread():
    member = Member(returns=True)
    ControllerGroup([("a", member)]).run(1, threading.Event())
    assert member.drained.is_set()
