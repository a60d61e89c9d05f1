"""Leader election over a resource lock (client-go `tools/leaderelection`).

`LeaderElector.run(stop_event)`:
1. Acquire: try to take the lock every `retry_period` (jittered by up to
   `JITTER_FACTOR` x), until it succeeds or `stop_event` is set. The lock can be taken
   when it does not exist, has no holder (released), or its record has not changed for
   `lease_duration` seconds as measured by this elector's own clock (clocks of different
   machines are never compared).
2. Lead: a *term* begins; `on_started_leading(leading_stop)` runs in a thread. The term lasts
   until `retry_period + renew_deadline` after the start of the last successful attempt (the
   acquiring one, then each renewal): the renewer tries `retry_period` after a success, then
   every `retry_period` until one attempt succeeds, as newer client-go's renewal round does.
   (The client-go vendored by tf-operator v0.5.3 waited a retry period before a round's first
   attempt, which left a single attempt per renew deadline with the default 5 s / 3 s;
   divergence D41 in the operator's docs/divergences.md.)
3. Stop: a watchdog thread alone ends the term, when `stop_event` is set or when the term's
   time is up, *whatever the renewing thread is doing*: an attempt stuck in a request does
   not extend the leadership (client-go relies on the request honouring its context; divergence
   D66). Ending it sets `leading_stop` and calls `on_stopped_leading` (once, always, as
   client-go does). If `stop_event` ended it and `release_on_cancel` is set, the run then writes
   a record with no holder and a 1 s lease, so a successor takes over at its next retry.

Every attempt runs in a request scope (:mod:`tf_operator.k8s.client.scope`): a renewal's
requests end by the term's end and give up as soon as the term ends, so a server answering
``429 Retry-After: 600`` costs the renewal one attempt, not ten minutes. The term's end comes
before any other elector can see the lease expire: those wait `lease_duration` from when they
read the last renewal, which was written after its attempt began, so the elector refuses a
`lease_duration` not longer than `renew_deadline + retry_period`. :meth:`LeaderElector.holds_lease`
says whether the lease is still surely ours (it stays true after a stop, until the lease runs
out or is released): a leader fences its writes with it.

An attempt by the leader first writes the record it last observed with a fresh renewTime
(one request; the server refuses it with 409 if the object changed since), and only on
failure reads the lock and writes again, as client-go's fast path does. Write conflicts
(409) and other API errors are logged and count as a failed attempt. All waiting goes
through the injected clock.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from tf_operator.k8s.client import is_not_found
from tf_operator.k8s.client.scope import request_scope
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.leaderelection.resourcelock import LeaderElectionRecord, Lock

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2
DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 5.0
DEFAULT_RETRY_PERIOD = 3.0


@dataclass
class LeaderCallbacks:
    on_started_leading: Callable[[threading.Event], None]
    on_stopped_leading: Callable[[], None]
    on_new_leader: Callable[[str], None] | None = None


class _Term:
    """One leadership: the event that stops its work and until when it lasts."""

    def __init__(self, valid_until: float) -> None:
        self.leading_stop = threading.Event()
        self.valid_until = valid_until  # on the elector's clock; extended by each renewal
        self.ended = False


class LeaderElector:
    def __init__(
        self,
        lock: Lock,
        callbacks: LeaderCallbacks,
        lease_duration: float = DEFAULT_LEASE_DURATION,
        renew_deadline: float = DEFAULT_RENEW_DEADLINE,
        retry_period: float = DEFAULT_RETRY_PERIOD,
        release_on_cancel: bool = True,
        clock: Clock | None = None,
    ) -> None:
        if lease_duration <= renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renew_deadline must be greater than retry_period*JITTER_FACTOR")
        if min(lease_duration, renew_deadline, retry_period) <= 0:
            raise ValueError("durations must be positive")
        if lease_duration <= renew_deadline + retry_period:
            raise ValueError("lease_duration must be greater than renew_deadline + retry_period")
        self.lock = lock
        self.callbacks = callbacks
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self._clock = clock or REAL_CLOCK
        self._random = random.Random()
        self._state_lock = threading.Lock()
        self._observed = LeaderElectionRecord()
        self._observed_time = float("-inf")
        self._reported_leader = ""
        self._term: _Term | None = None
        self._lease_until = float("-inf")  # holds_lease() until then (elector's clock)

    # ---- public surface ---------------------------------------------------------
    def run(self, stop_event: threading.Event) -> None:
        """Block until `stop_event` is set or leadership is lost."""
        acquired_at = self._acquire(stop_event)
        if acquired_at is None:
            self.callbacks.on_stopped_leading()
            return
        term = self._begin_term(acquired_at)
        self.lock.record_event("became leader")
        log.info("successfully acquired lease %s", self.lock.describe())
        watchdog = threading.Thread(
            target=self._watch, args=(term, stop_event), name="leader-watchdog", daemon=True
        )
        watchdog.start()
        threading.Thread(
            target=self.callbacks.on_started_leading,
            args=(term.leading_stop,),
            name="leader-started",
            daemon=True,
        ).start()
        self._renew(term)
        watchdog.join()
        if stop_event.is_set() and self.release_on_cancel:
            self.release()

    def is_leader(self) -> bool:
        """True from acquiring the lock until the term ends (lost, stopped)."""
        term = self._term
        return term is not None and not term.ended

    def holds_lease(self) -> bool:
        """True while no other elector can have taken the lock: from acquiring it until the
        last renewal's term runs out or the lock is released (a stop alone does not end it)."""
        with self._state_lock:
            return self._clock.monotonic() < self._lease_until

    def get_leader(self) -> str:
        """The holder in the last record observed ("" when none)."""
        with self._state_lock:
            return self._observed.holder_identity

    def release(self) -> bool:
        """Give the lock up if we hold it: no holder, 1 s lease. True when released."""
        with self._state_lock:
            self._lease_until = float("-inf")  # before the write: no fenced write after it
            if self._observed.holder_identity != self.lock.identity:
                return True
            transitions = self._observed.leader_transitions
        now = self._clock.now()
        record = LeaderElectionRecord("", 1, now, now, transitions)
        try:
            with request_scope(timeout=self.renew_deadline):
                self.lock.update(record)
        except Exception as exc:
            log.error("failed to release lock %s: %s", self.lock.describe(), exc)
            return False
        self._observe(record)
        log.info("released lease %s", self.lock.describe())
        return True

    # ---- loops --------------------------------------------------------------------
    def _acquire(self, stop_event: threading.Event) -> float | None:
        """Try until the lock is ours (return when that attempt began) or stopped (None)."""
        desc = self.lock.describe()
        log.info("attempting to acquire leader lease %s...", desc)
        while not stop_event.is_set():
            began = self._clock.monotonic()
            with request_scope(timeout=self.renew_deadline, cancel=stop_event):
                succeeded = self._try_acquire_or_renew()
            self._maybe_report_transition()
            if succeeded:
                return began
            log.debug("failed to acquire lease %s", desc)
            pause = self.retry_period * (1.0 + self._random.random() * JITTER_FACTOR)
            if self._clock.wait(stop_event, pause):
                break
        return None

    def _begin_term(self, began: float) -> _Term:
        term = _Term(self._term_end(began))
        with self._state_lock:
            self._term = term
            self._lease_until = term.valid_until
        return term

    def _term_end(self, attempt_began: float) -> float:
        return attempt_began + self.retry_period + self.renew_deadline

    def _renew(self, term: _Term) -> None:
        """Attempt `retry_period` after each success and every `retry_period` after a failed
        attempt began, until the watchdog ends the term."""
        desc = self.lock.describe()
        next_attempt = self._clock.monotonic() + self.retry_period
        while not self._clock.wait_until(term.leading_stop, next_attempt):
            began = self._clock.monotonic()
            if began >= term.valid_until:  # too late to renew: the watchdog ends the term
                term.leading_stop.wait()
                return
            with self._scope_of(term):
                renewed = self._try_acquire_or_renew()
            self._maybe_report_transition()
            with self._state_lock:
                if renewed and not term.ended:
                    term.valid_until = self._lease_until = self._term_end(began)
            if renewed:
                log.debug("successfully renewed lease %s", desc)
                next_attempt = self._clock.monotonic() + self.retry_period
            else:
                next_attempt = began + self.retry_period

    @contextmanager
    def _scope_of(self, term: _Term) -> Iterator[None]:
        """The requests of a renewal end by the term's end and give up when it ends."""
        left = term.valid_until - self._clock.monotonic()
        with request_scope(deadline=time.monotonic() + left, cancel=term.leading_stop):
            yield

    def _watch(self, term: _Term, stop_event: threading.Event) -> None:
        """End the term when stopped or when its time is up (see the module docstring)."""
        while True:
            with self._state_lock:
                deadline = term.valid_until
            if self._clock.wait_until(stop_event, deadline):
                self._end_term(term, lost=False)
                return
            with self._state_lock:
                expired = self._clock.monotonic() >= term.valid_until
            if expired:
                self._end_term(term, lost=True)
                return

    def _end_term(self, term: _Term, lost: bool) -> None:
        with self._state_lock:
            term.ended = True
        term.leading_stop.set()
        if lost:
            self.lock.record_event("stopped leading")
            log.info("failed to renew lease %s: renew deadline exceeded", self.lock.describe())
        self.callbacks.on_stopped_leading()

    # ---- one attempt --------------------------------------------------------------
    def _try_acquire_or_renew(self) -> bool:
        now = self._clock.now()
        identity = self.lock.identity
        record = LeaderElectionRecord(identity, int(self.lease_duration), now, now, 0)
        if self._renew_optimistically(record):
            return True
        try:
            old = self.lock.get()
        except Exception as exc:
            if not is_not_found(exc):
                log.error("error retrieving resource lock %s: %s", self.lock.describe(), exc)
                return False
            try:
                self.lock.create(record)
            except Exception as create_exc:
                log.error("error initially creating leader election record: %s", create_exc)
                return False
            self._observe(record)
            return True

        with self._state_lock:
            if old != self._observed:
                self._observed = old
                self._observed_time = self._clock.monotonic()
            unexpired = self._observed_time + self.lease_duration > self._clock.monotonic()
        if old.holder_identity and old.holder_identity != identity and unexpired:
            log.debug("lock is held by %s and has not yet expired", old.holder_identity)
            return False

        if old.holder_identity == identity:
            record = replace(
                record,
                acquire_time=old.acquire_time,
                leader_transitions=old.leader_transitions,
            )
        else:
            record = replace(record, leader_transitions=old.leader_transitions + 1)
        try:
            self.lock.update(record)
        except Exception as exc:
            log.error("failed to update lock %s: %s", self.lock.describe(), exc)
            return False
        self._observe(record)
        return True

    def _renew_optimistically(self, record: LeaderElectionRecord) -> bool:
        """The leader's fast path: write over the record it last observed, without a read."""
        with self._state_lock:
            observed, observed_time = self._observed, self._observed_time
        if observed.holder_identity != self.lock.identity:
            return False
        if observed_time + observed.lease_duration_seconds <= self._clock.monotonic():
            return False
        record = replace(
            record,
            acquire_time=observed.acquire_time,
            leader_transitions=observed.leader_transitions,
        )
        try:
            self.lock.update(record)
        except Exception as exc:
            log.info(
                "failed to update lock %s optimistically: %s; falling back to slow path",
                self.lock.describe(),
                exc,
            )
            return False
        self._observe(record)
        return True

    def _observe(self, record: LeaderElectionRecord) -> None:
        with self._state_lock:
            self._observed = record
            self._observed_time = self._clock.monotonic()

    def _maybe_report_transition(self) -> None:
        with self._state_lock:
            holder = self._observed.holder_identity
            if holder == self._reported_leader:
                return
            self._reported_leader = holder
        if holder and self.callbacks.on_new_leader is not None:
            threading.Thread(
                target=self.callbacks.on_new_leader, args=(holder,), daemon=True
            ).start()
