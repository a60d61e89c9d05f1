"""Leader election on FakeKubeClient with a fake clock: competition, hand-over, loss."""

import threading
import time

import pytest

from support.fake_clock import FakeClock
from support.fake_kube import FakeKubeClient
from tf_operator.k8s.client import new_conflict, new_internal_error
from tf_operator.k8s.client.scope import current_scope
from tf_operator.k8s.leaderelection import (
    UNKNOWN_LEADER,
    EndpointsLock,
    LeaderCallbacks,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
    new_lock,
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
        # virtual times of successful writes of the lock (the first one acquires it: the
        # test does not step time during an attempt, but may before on_started runs)
        self.writes = []
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

    def acquired(self):
        """True once the lock is ours. Tests step time until this, not until ``started``:
        on_started runs in a thread of its own, and stepping on until it has run could
        outrun the renewals."""
        return bool(self.writes)

    def shutdown(self):
        self.stop.set()
        self.thread.join(5)
        assert not self.thread.is_alive()


def advance(clock, seconds, waiters, until=None, step=0.5):
    """Step virtual time; after each step wait until `waiters` threads wait again (or
    `until()` holds). Return `until()` (True when no condition is given). A leader waits in
    two threads (its renewer and its term's watchdog), a candidate in one."""
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
    assert clock.block_until_waiters(3)
    advance(clock, 30, waiters=3)
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

    assert advance(clock, 20, waiters=1, until=b.acquired)
    wait_for(b.elector.is_leader)
    assert b.writes[0] - released_at <= MAX_JITTERED_RETRY + 0.5
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
    assert clock.block_until_waiters(3)
    advance(clock, 10, waiters=3)
    a.shutdown()  # stops renewing; the record still names "a"
    last_renew = a.writes[-1]
    assert lock_cls(kube, "default", "tf-operator", "probe").get().holder_identity == "a"

    assert advance(clock, 60, waiters=1, until=b.acquired)
    assert b.writes[0] >= last_renew + LEASE
    assert b.writes[0] <= last_renew + LEASE + 2 * MAX_JITTERED_RETRY + 0.5
    b.shutdown()


@pytest.mark.parametrize("lock_cls", LOCKS)
def test_leader_that_cannot_renew_steps_down_after_renew_deadline(kube, clock, lock_cls):
    a = Candidate(kube, clock, lock_cls, "a").start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(2)
    advance(clock, 6, waiters=2)
    last_renew = a.writes[-1]
    kube.prepend_reactor(
        "update", lock_cls.resource.plural, lambda _: (True, new_internal_error("x"))
    )
    assert advance(clock, 20, waiters=2, until=a.stopped.is_set)
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
    assert clock.block_until_waiters(2)
    advance(clock, 6, waiters=2)
    last_renew = a.writes[-1]
    _fail_updates(kube, lock_cls, lambda: True)
    assert advance(clock, 20, waiters=2, until=a.stopped.is_set)
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
    assert clock.block_until_waiters(2)
    advance(clock, 6, waiters=2)
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
    advance(clock, 30, waiters=2)
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
    assert clock.block_until_waiters(2)
    kube.prepend_reactor("update", "endpoints", every_other)
    advance(clock, 60, waiters=2)
    assert a.elector.is_leader() and not a.stopped.is_set()
    assert len(a.writes) >= 15
    a.shutdown()


def test_leader_renews_with_one_write(kube, clock):
    """client-go's fast path: the leader writes over the record it observed, no read."""
    a = Candidate(kube, clock, LeaseLock, "a").start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(2)
    kube.clear_actions()
    advance(clock, 9, waiters=2)
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
    assert advance(clock, 10, waiters=1, until=a.acquired)
    assert len(conflicts) == 1
    record = EndpointsLock(kube, "default", "tf-operator", "probe").get()
    assert record.holder_identity == "a" and record.leader_transitions == 5
    a.shutdown()


def test_stop_before_acquiring_returns_and_reports_stopped(kube, clock):
    a = Candidate(kube, clock, LeaseLock, "a").start()
    assert a.started.wait(5)
    b = Candidate(kube, clock, LeaseLock, "b").start()
    assert clock.block_until_waiters(3)
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
    with pytest.raises(ValueError):  # the term could outlast a lease another elector sees
        LeaderElector(lock, cb, lease_duration=8, renew_deadline=5, retry_period=3)
    LeaderElector(lock, cb)  # defaults 15 / 5 / 3 are valid


def _hang_updates(kube, lock_cls, hanging, entered=None):
    """Lock updates block while ``hanging`` is set, ignoring their request scope: a transport
    that does not honour deadlines (``entered`` collects the scope of each blocked update)."""

    def react(_action):
        if hanging.is_set():
            if entered is not None:
                entered.append(current_scope())
            while hanging.is_set():
                time.sleep(0.002)
        return False, None

    kube.prepend_reactor("update", lock_cls.resource.plural, react)


@pytest.mark.parametrize("lock_cls", LOCKS)
def test_renewal_stuck_in_the_transport_ends_the_leadership_at_the_deadline(kube, clock, lock_cls):
    """The watchdog ends the term when its time is up, though the renewing thread is still
    blocked in a request (a 429 with a long Retry-After, a dead socket): the leader must not
    go on reconciling while another elector can take the lock."""
    a = Candidate(kube, clock, lock_cls, "a").start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(2)
    advance(clock, 6, waiters=2)
    last_renew = a.writes[-1]
    hanging = threading.Event()
    hanging.set()
    entered = []
    _hang_updates(kube, lock_cls, hanging, entered)
    try:
        assert advance(clock, RETRY, waiters=2, until=lambda: bool(entered))
        # one thread waits now: the watchdog (the renewer is blocked in its attempt)
        assert advance(clock, 20, waiters=1, until=a.stopped.is_set)
        assert a.stopped_at == last_renew + RETRY + RENEW
        assert a.leading_stop.is_set()
        assert not a.elector.is_leader() and not a.elector.holds_lease()
        assert a.thread.is_alive()  # still blocked: the term ended without it
    finally:
        hanging.clear()
    a.thread.join(5)
    assert not a.thread.is_alive()


def test_renewal_requests_end_with_the_term_and_are_cancelled_with_it(kube, clock):
    """Each renewal runs in a request scope whose deadline is the term's end (in real
    monotonic time) and whose cancel event is the term's stop: a transport that honours it
    wakes from a Retry-After wait at once when the leader is stopped."""
    scopes = []
    a = Candidate(kube, clock, LeaseLock, "a").start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(2)
    advance(clock, 3, waiters=2)
    last_renew = a.writes[-1]
    kube.prepend_reactor(
        "update", "leases", lambda _a: (scopes.append(current_scope()), (False, None))[1]
    )
    real_then = time.monotonic()
    advance(clock, 3, waiters=2)
    assert a.attempts[-1] == last_renew + RETRY
    scope = scopes[0]
    assert scope.cancel is a.leading_stop
    # the attempt began a retry period after the renewal: the term has RENEW seconds left
    assert abs(scope.deadline - (real_then + RENEW)) < 0.5
    a.shutdown()
    assert scope.cancel.is_set()


def test_stop_ends_the_term_while_a_renewal_hangs(kube, clock):
    """SIGTERM's stop event ends the leadership at once even while a renewal is blocked."""
    a = Candidate(kube, clock, EndpointsLock, "a", release=False).start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(2)
    advance(clock, 3, waiters=2)
    hanging = threading.Event()
    hanging.set()
    entered = []
    _hang_updates(kube, EndpointsLock, hanging, entered)
    try:
        advance(clock, 3, waiters=2, until=lambda: bool(entered))
        a.stop.set()
        assert a.stopped.wait(5)
        assert a.leading_stop.is_set() and not a.elector.is_leader()
        assert a.stopped_at < a.writes[-1] + RETRY + RENEW
    finally:
        hanging.clear()
    a.thread.join(5)
    assert not a.thread.is_alive()


def test_the_lease_is_held_after_a_stop_until_it_runs_out_or_is_released(kube, clock):
    """A stopped leader's workers may finish their writes while the lease is surely still
    its own (nobody can take it before the term's end); a release ends that at once."""
    a = Candidate(kube, clock, EndpointsLock, "a", release=False).start()
    assert a.started.wait(5)
    assert clock.block_until_waiters(2)
    advance(clock, 3, waiters=2)
    last_renew = a.writes[-1]
    a.shutdown()
    assert not a.elector.is_leader() and a.elector.holds_lease()
    clock.set_monotonic(last_renew + RETRY + RENEW - 0.5)
    assert a.elector.holds_lease()
    clock.step(0.5)
    assert not a.elector.holds_lease()

    b = Candidate(kube, clock, EndpointsLock, "b", release=False).start()
    assert advance(clock, 30, waiters=1, until=b.acquired)
    wait_for(b.elector.holds_lease)
    b.shutdown()
    assert b.elector.release()
    assert not b.elector.holds_lease()


def _migration_lock(kube, namespace, name, identity):
    return new_lock("endpointsleases", kube, namespace, name, identity)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (EndpointsLock, _migration_lock),
        (_migration_lock, EndpointsLock),
        (LeaseLock, _migration_lock),
        (_migration_lock, LeaseLock),
    ],
)
def test_the_migration_lock_and_either_single_lock_never_lead_together(kube, clock, first, second):
    """client-go's ``endpointsleases``: replicas of each step of an Endpoints-to-Lease
    migration exclude those of the step before and after."""
    a = Candidate(kube, clock, first, "a").start()
    assert a.started.wait(5)
    b = Candidate(kube, clock, second, "b").start()
    assert clock.block_until_waiters(3)
    advance(clock, 40, waiters=3)  # over two lease durations of renewals by a
    assert a.elector.is_leader() and not b.started.is_set()
    a.shutdown()  # released
    assert advance(clock, 40, waiters=1, until=b.acquired)
    wait_for(b.elector.is_leader)
    b.shutdown()


def test_the_endpoints_and_the_leases_lock_alone_do_not_exclude_each_other(kube, clock):
    """Why the migration lock exists: the two single locks share no object."""
    a = Candidate(kube, clock, EndpointsLock, "a").start()
    b = Candidate(kube, clock, LeaseLock, "b").start()
    assert a.started.wait(5) and b.started.wait(5)
    a.shutdown()
    b.shutdown()


def test_the_migration_lock_reports_an_unknown_holder_when_its_records_disagree(kube, clock):
    lease_holder = Candidate(kube, clock, LeaseLock, "l").start()
    assert lease_holder.started.wait(5)
    EndpointsLock(kube, "default", "tf-operator", "e").create(
        LeaderElectionRecord("e", 15, clock.now(), clock.now(), 0)
    )
    lock = _migration_lock(kube, "default", "tf-operator", "m")
    assert lock.get().holder_identity == UNKNOWN_LEADER
    lease_holder.shutdown()
