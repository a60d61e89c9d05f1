"""Leader election over a resource lock (client-go `tools/leaderelection`).

`LeaderElector.run(stop_event)`:
1. Acquire: try to take the lock every `retry_period` (jittered by up to
   `JITTER_FACTOR` x), until it succeeds or `stop_event` is set. The lock can be taken
   when it does not exist, has no holder (released), or its record has not changed for
   `lease_duration` seconds as measured by this elector's own clock (clocks of different
   machines are never compared).
2. Lead: start `on_started_leading(leading_stop)` in a thread, then renew as newer
   client-go does: one renewal round tries at once and then every `retry_period` until one
   attempt succeeds or `renew_deadline` has passed since the round began; the next round
   begins `retry_period` after a success. A round without success loses leadership. (The
   client-go vendored by tf-operator v0.5.3 waited a retry period before its first attempt,
   which left a single attempt per renew deadline with the default 5 s / 3 s: one failed
   request ended the leadership; divergence D41 in the operator's docs/divergences.md.)
3. Stop: set `leading_stop`; if `stop_event` ended the leadership and `release_on_cancel`
   is set, write a record with no holder and a 1 s lease so a successor takes over at
   its next retry; finally call `on_stopped_leading` (always, as client-go does).

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
from collections.abc import Callable
from dataclasses import dataclass, replace

from tf_operator.k8s.client import is_not_found
from tf_operator.k8s.clock import REAL_CLOCK, Clock
from tf_operator.k8s.leaderelection.resourcelock import LeaderElectionRecord, ResourceLock

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


class LeaderElector:
    def __init__(
        self,
        lock: ResourceLock,
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
        self._leading = False

    # ---- public surface ---------------------------------------------------------
    def run(self, stop_event: threading.Event) -> None:
        """Block until `stop_event` is set or leadership is lost."""
        try:
            if not self._acquire(stop_event):
                return
            leading_stop = threading.Event()
            self._leading = True
            threading.Thread(
                target=self.callbacks.on_started_leading,
                args=(leading_stop,),
                name="leader-started",
                daemon=True,
            ).start()
            try:
                self._renew(stop_event)
            finally:
                self._leading = False
                leading_stop.set()
            if stop_event.is_set() and self.release_on_cancel:
                self.release()
        finally:
            self.callbacks.on_stopped_leading()

    def is_leader(self) -> bool:
        """True from acquiring the lock until leadership ends (lost, stopped)."""
        return self._leading

    def get_leader(self) -> str:
        """The holder in the last record observed ("" when none)."""
        with self._state_lock:
            return self._observed.holder_identity

    def release(self) -> bool:
        """Give the lock up if we hold it: no holder, 1 s lease. True when released."""
        with self._state_lock:
            if self._observed.holder_identity != self.lock.identity:
                return True
            transitions = self._observed.leader_transitions
        now = self._clock.now()
        record = LeaderElectionRecord("", 1, now, now, transitions)
        try:
            self.lock.update(record)
        except Exception as exc:
            log.error("failed to release lock %s: %s", self.lock.describe(), exc)
            return False
        self._observe(record)
        log.info("released lease %s", self.lock.describe())
        return True

    # ---- loops --------------------------------------------------------------------
    def _acquire(self, stop_event: threading.Event) -> bool:
        desc = self.lock.describe()
        log.info("attempting to acquire leader lease %s...", desc)
        while not stop_event.is_set():
            succeeded = self._try_acquire_or_renew()
            self._maybe_report_transition()
            if succeeded:
                self.lock.record_event("became leader")
                log.info("successfully acquired lease %s", desc)
                return True
            log.debug("failed to acquire lease %s", desc)
            pause = self.retry_period * (1.0 + self._random.random() * JITTER_FACTOR)
            if self._clock.wait(stop_event, pause):
                break
        return False

    def _renew(self, stop_event: threading.Event) -> None:
        """Renewal rounds until one fails (leadership lost) or `stop_event` is set."""
        desc = self.lock.describe()
        while True:
            renewed = self._renew_round(stop_event)
            if renewed is None:
                return
            self._maybe_report_transition()
            if not renewed:
                self.lock.record_event("stopped leading")
                log.info("failed to renew lease %s: renew deadline exceeded", desc)
                return
            log.debug("successfully renewed lease %s", desc)
            if self._clock.wait(stop_event, self.retry_period):
                return

    def _renew_round(self, stop_event: threading.Event) -> bool | None:
        """Try now, then every retry period until renewed or the renew deadline has passed.

        True when renewed, False when the deadline passed first, None when stopped.
        """
        start = self._clock.monotonic()
        deadline = start + self.renew_deadline
        attempts = 0
        while True:
            if stop_event.is_set():
                return None
            if self._try_acquire_or_renew():
                return True
            attempts += 1
            next_attempt = start + attempts * self.retry_period
            if next_attempt >= deadline:
                return None if self._clock.wait_until(stop_event, deadline) else False
            if self._clock.wait_until(stop_event, next_attempt):
                return None

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
