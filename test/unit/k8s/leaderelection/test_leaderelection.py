"""Leader election on FakeKubeClient with a fake clock: competition, hand-over, loss."""

import threading
import time

import pytest

from support.fake_clock import FakeClock
from support.fake_kube import FakeKubeClient
from tf_operator.k8s.client import new_conflict, new_internal_error
from tf_operator.k8s.leaderelection import (
    EndpointsLock,
    LeaderCallbacks,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
)

RETRY, RENEW, LEASE = 3.0, 5.0, 15.0
MAX_JITTERED_RETRY = RETRY * 2.2


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        pause.wait(0.002)


class Candidate:
    """One elector running in a thread, recording what happens to it."""

    def __init__(self, kube, clock, lock_cls, identity, release=True):
        self.clock = clock
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.started_at = self.stopped_at = None
        self.leading_stop = None
        self.new_leaders = []
        self.writes = []  # virtual times of successful writes of the lock
        self.attempts = []  # virtual times of every write tried (create or update)
        self.lock = lock_cls(kube, "default", "tf-operator", identity)
        for name in ("create", "update"):
            self._wrap(name)
        self.elector = LeaderElector(
            self.lock,
            LeaderCallbacks(self._on_started, self._on_stopped, self.new_leaders.append),
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
            release_on_cancel=release,
            clock=clock,
        )
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.elector.run, args=(self.stop,), daemon=True)

    def _wrap(self, name):
        original = getattr(self.lock, name)

        def wrapped(record):
            self.attempts.append(self.clock.monotonic())
            original(record)
            self.writes.append(self.clock.monotonic())

        setattr(self.lock, name, wrapped)

    def _on_started(self, leading_stop):
        self.started_at = self.clock.monotonic()
        self.leading_stop = leading_stop
        self.started.set()

    def _on_stopped(self):
        self.stopped_at = self.clock.monotonic()
        self.stopped.set()

    def start(self):
        self.thread.start()
        return self

    def shutdown(self):
        self.stop.set()
        self.thread.join(5)
        assert not self.thread.is_alive()


def advance(clock, seconds, waiters, until=None, step=0.5):
    """Step virtual time; after each step wait until `waiters` threads wait again (or
    `until()` holds). Return `until()` (True when no condition is given)."""
    elapsed = 0.0
    while elapsed < seconds:
        if until is not None and until():
            return True
        clock.step(step)
        elapsed += step
        wait_for(lambda: (until is not None and until()) or clock.waiters() >= waiters)
    return until() if until is not None else True


@pytest.fixture
def kube():
    return FakeKubeClient()


@pytest.fixture
def clock():
    return FakeClock()


LOCKS = [EndpointsLock, LeaseLock]


@pytest.mark.parametrize("lock_cls", LOCKS)
def test_only_one_leads_and_release_hands_over_fast(kube, clock, lock_cls):
    a = Candidate(kube, clock, lock_cls, "a").start()
    assert a.started.wait(5)
    b = Candidate(kube, clock, lock_cls, "b").start()
    assert clock.block_until_waiters(2)
    advance(clock, 30, waiters=2)
    assert a.elector.is_leader() and not b.elector.is_leader()
    assert not b.started.is_set()
    assert b.elector.get_leader() == "a"
    assert len(a.writes) >= 10  # renewed every retry period
    wait_for(lambda: b.new_leaders == ["a"])

    a.shutdown()  # release_on_cancel: holder cleared, lease 1 s
    assert a.stopped.is_set() and a.leading_stop.is_set()
    assert not a.elector.is_leader()
    record = lock_cls(kube, "default", "tf-operator", "probe").get()
    assert record.holder_identity == "" and record.lease_duration_seconds == 1
    released_at = clock.monotonic()

    assert advance(clock, 20, waiters=1, until=b.started.is_set)
    assert b.started_at - released_at <= MAX_JITTERED_RETRY + 0.5
    assert b.elector.is_leader()
    record = lock_cls(kube, "default", "tf-operator", "probe").get()
    assert record.holder_identity == "b"
    assert record.leader_transitions == 1
    wait_for(lambda: b.new_leaders == ["a", "b"])
    b.shutdown()


@pytest.mark.parametrize("lock_cls", LOCKS)
def test_successor_waits_lease_duration_when_leader_vanishes_without_release(kube, clock, lock_cls):
    a = Candidate(kube, clock, lock_cls, "a", release=False).start()
    assert a.started.wait(5)
    b = Candidate(kube, clock, lock_cls, "b").start()
    assert clock.block_until_waiters(2)
    advance(clock, 10, waiters=2)
    a.shutdown()  # stops renewing; the record still names "a"
    last_renew = a.writes[-1]
    assert lock_cls(kube, "default", "tf-operator", "probe").get().holder_identity == "a"

    assert advance(clock, 60, waiters=1, until=b.started.is_set)
    assert b.started_at >= last_renew + LEASE
    assert b.started_at <= last_renew + LEASE + 2 * MAX_JITTERED_RETRY + 0.5
    b.shutdown()


@pytest.mark.parametrize("lock_cls", LOCKS)
def test_leader_that_cannot_renew_steps_down_after_renew_deadline(kube, clock, lock_cls):
    a = Candidate(kube, clock, lock_cls, "a").start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(1)
    advance(clock, 6, waiters=1)
    last_renew = a.writes[-1]
    kube.prepend_reactor(
        "update", lock_cls.resource.plural, lambda _: (True, new_internal_error("x"))
    )
    assert advance(clock, 20, waiters=1, until=a.stopped.is_set)
    a.thread.join(5)
    assert not a.thread.is_alive()
    assert a.leading_stop.is_set()
    # The round after the last renewal begins a retry period later and lasts the deadline.
    assert a.stopped_at == last_renew + RETRY + RENEW
    assert not a.elector.is_leader()


def _fail_updates(kube, lock_cls, failing):
    """Answer the lock's updates with 500 while ``failing()`` holds."""

    def react(_action):
        return (True, new_internal_error("injected")) if failing() else (False, None)

    kube.prepend_reactor("update", lock_cls.resource.plural, react)


@pytest.mark.parametrize("lock_cls", LOCKS)
def test_renew_round_tries_at_once_then_every_retry_period_until_the_deadline(
    kube, clock, lock_cls
):
    a = Candidate(kube, clock, lock_cls, "a").start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(1)
    advance(clock, 6, waiters=1)
    last_renew = a.writes[-1]
    _fail_updates(kube, lock_cls, lambda: True)
    assert advance(clock, 20, waiters=1, until=a.stopped.is_set)
    round_start = last_renew + RETRY
    tried = [t for t in a.attempts if t > last_renew]
    # Each attempt is the optimistic write, then a read and a second write: two writes at
    # the round's start and two a retry period later (the next would come after the
    # deadline). v0.5.3's client-go waited a retry period first: one attempt per round.
    assert tried == [round_start] * 2 + [round_start + RETRY] * 2
    assert a.stopped_at == round_start + RENEW


@pytest.mark.parametrize("offset", [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
def test_leader_keeps_the_lease_through_a_2_5_s_outage(kube, clock, offset):
    """Whenever a 2.5 s outage starts within a renew cycle, some attempt of the round
    falls outside it (v0.5.3's single attempt per round fell inside for most offsets)."""
    a = Candidate(kube, clock, EndpointsLock, "a").start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(1)
    advance(clock, 6, waiters=1)
    outage_start = a.writes[-1] + offset
    _fail_updates(
        kube, EndpointsLock, lambda: outage_start <= clock.monotonic() < outage_start + 2.5
    )
    kube.prepend_reactor(
        "get",
        "endpoints",
        lambda _: (
            (True, new_internal_error("injected"))
            if outage_start <= clock.monotonic() < outage_start + 2.5
            else (False, None)
        ),
    )
    advance(clock, 30, waiters=1)
    assert a.elector.is_leader() and not a.stopped.is_set()
    assert a.writes[-1] > outage_start + 2.5
    a.shutdown()


def test_leader_keeps_the_lease_when_every_other_request_fails(kube, clock):
    """A steady error rate: a failed attempt is followed by another within the round."""
    calls = []

    def every_other(_action):
        calls.append(1)
        return (True, new_internal_error("injected")) if len(calls) % 2 else (False, None)

    a = Candidate(kube, clock, EndpointsLock, "a").start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(1)
    kube.prepend_reactor("update", "endpoints", every_other)
    advance(clock, 60, waiters=1)
    assert a.elector.is_leader() and not a.stopped.is_set()
    assert len(a.writes) >= 15
    a.shutdown()


def test_leader_renews_with_one_write(kube, clock):
    """client-go's fast path: the leader writes over the record it observed, no read."""
    a = Candidate(kube, clock, LeaseLock, "a").start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(1)
    kube.clear_actions()
    advance(clock, 9, waiters=1)
    verbs = [act.verb for act in kube.actions if act.resource_plural == "leases"]
    assert verbs == ["update"] * 3
    a.shutdown()


def test_conflict_on_acquire_is_retried(kube, clock):
    seed = EndpointsLock(kube, "default", "tf-operator", "old")
    seed.create(LeaderElectionRecord("", 1, clock.now(), clock.now(), 4))
    conflicts = []

    def conflict_once(action):
        if not conflicts:
            conflicts.append(action)
            return True, new_conflict("endpoints", "tf-operator", "object was modified")
        return False, None

    kube.prepend_reactor("update", "endpoints", conflict_once)
    a = Candidate(kube, clock, EndpointsLock, "a").start()
    assert clock.block_until_waiters(1)
    assert not a.started.is_set()
    assert advance(clock, 10, waiters=1, until=a.started.is_set)
    assert len(conflicts) == 1
    record = EndpointsLock(kube, "default", "tf-operator", "probe").get()
    assert record.holder_identity == "a" and record.leader_transitions == 5
    a.shutdown()


def test_stop_before_acquiring_returns_and_reports_stopped(kube, clock):
    a = Candidate(kube, clock, LeaseLock, "a").start()
    assert a.started.wait(5)
    b = Candidate(kube, clock, LeaseLock, "b").start()
    assert clock.block_until_waiters(2)
    b.shutdown()
    assert b.stopped.is_set() and not b.started.is_set()
    a.shutdown()


def test_config_validation():
    lock = EndpointsLock(FakeKubeClient(), "default", "x", "me")
    cb = LeaderCallbacks(lambda stop: None, lambda: None)
    with pytest.raises(ValueError):
        LeaderElector(lock, cb, lease_duration=5, renew_deadline=5)
    with pytest.raises(ValueError):
        LeaderElector(lock, cb, renew_deadline=3.5, retry_period=3)
    LeaderElector(lock, cb)  # defaults 15 / 5 / 3 are valid
