"""Controller expectations: what a controller has asked for and not yet seen in its caches.

Kubernetes' ``pkg/controller`` ``ControllerExpectations``, which v0.5.3 vendored. Before
creating (deleting) an object the controller raises the creation (deletion) count of a key;
its informer lowers the count when the event arrives. While a count is above zero the caches
are known to be stale for that key, which is what stops a controller creating a second object
whose first one the informer has not delivered yet.

Records live in a ``cachetools.TTLCache`` with a five-minute TTL, refreshed on every raise: a
record that has not been satisfied in that time expires and then counts as satisfied, as in
client-go, so a lost watch event cannot wedge a controller forever.

Differences from v0.5.3: raising accumulates instead of replacing (divergence D2), a failed
create/delete is lowered again by the caller (D3), deletions are tracked as well (D4), and
``delete_expectations_with_prefix`` drops an owner's records when it goes away (D5).
``D<n>``: docs/divergences.md.

All methods are thread-safe (one lock around the cache).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

from cachetools import TTLCache

from tf_operator.k8s.client import is_timeout
from tf_operator.k8s.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

# How long an unsatisfied expectation is trusted (client-go's ExpectationsTimeout).
EXPECTATIONS_TIMEOUT_SECONDS = 5 * 60.0


@dataclass
class _Record:
    add: int = 0
    delete: int = 0

    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class ControllerExpectations:
    """Per-key pending creation/deletion counts; see the module docstring."""

    def __init__(
        self, clock: Clock = REAL_CLOCK, ttl: float = EXPECTATIONS_TIMEOUT_SECONDS
    ) -> None:
        self._lock = threading.Lock()
        self._cache: TTLCache[str, _Record] = TTLCache(
            maxsize=math.inf, ttl=ttl, timer=clock.monotonic
        )

    def _raise(self, key: str, add: int, delete: int) -> None:
        with self._lock:
            record = self._cache.get(key) or _Record()
            record.add += add
            record.delete += delete
            self._cache[key] = record  # re-inserting restarts the TTL

    def _lower(self, key: str, add: int, delete: int) -> bool:
        with self._lock:
            record = self._cache.get(key)
            if record is None:
                return True
            # Never below zero: an event we did not ask for must not pre-pay a later
            # expectation. Mutated in place, since assigning back would restart the TTL.
            record.add = max(record.add - add, 0)
            record.delete = max(record.delete - delete, 0)
            return record.fulfilled()

    def expect_creations(self, key: str, count: int = 1) -> None:
        """Record that ``count`` more objects are about to be created for ``key``."""
        self._raise(key, count, 0)

    def expect_deletions(self, key: str, count: int = 1) -> None:
        """Record that ``count`` more objects are about to be deleted for ``key``."""
        self._raise(key, 0, count)

    def creation_observed(self, key: str) -> bool:
        """An informer saw a creation (or a create call failed): lower the count by one.
        True when nothing is pending for ``key`` any more (``satisfied_expectations``)."""
        return self._lower(key, 1, 0)

    def deletion_observed(self, key: str) -> bool:
        """An informer saw a deletion (or a delete call failed): lower the count by one.
        True when nothing is pending for ``key`` any more (``satisfied_expectations``)."""
        return self._lower(key, 0, 1)

    def run_expected_delete(self, key: str, delete: Callable[[], bool]) -> bool:
        """Run one delete under a deletion expectation of ``key``; ``delete`` says whether it
        deleted anything. Lowered again when it did not, or failed (D3, D4)."""
        self.expect_deletions(key, 1)
        deleted = False
        try:
            deleted = delete()
        finally:
            if not deleted:
                self.deletion_observed(key)
        return deleted

    def satisfied_expectations(self, key: str) -> bool:
        """True when nothing is pending for ``key`` (or its record expired / never existed)."""
        with self._lock:
            record = self._cache.get(key)
            if record is None:
                return True
            if record.fulfilled():
                return True
            log.debug("controller expectations for %s not yet met: %s", key, record)
            return False

    def get(self, key: str) -> tuple[int, int] | None:
        """The pending (creations, deletions) of ``key``, or None when it has no record."""
        with self._lock:
            record = self._cache.get(key)
            return None if record is None else (record.add, record.delete)

    def delete_expectations_with_prefix(self, prefix: str) -> None:
        """Drop every record whose key starts with ``prefix`` (one owner's records)."""
        with self._lock:
            for key in [k for k in self._cache if k.startswith(prefix)]:
                self._cache.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)


@dataclass(frozen=True, slots=True)
class ExpectedCreate:
    """One create whose creation expectation was raised when it was queued, as Kubernetes'
    ReplicaSet controller raises the whole diff before its slow start: so a sync that runs
    while it is in flight waits for it. A failed create lowers the expectation again (D3);
    one that timed out keeps it and is no error, as Kubernetes' job controller does (the
    object may still appear, and its informer event lowers the count); a create skipped
    after a failed batch lowers it through :meth:`skip`."""

    expectations: ControllerExpectations
    key: str
    create: Callable[[], object]

    def __call__(self) -> None:
        try:
            self.create()
        except Exception as err:
            if is_timeout(err):
                return
            self.expectations.creation_observed(self.key)
            raise

    def skip(self) -> None:
        self.expectations.creation_observed(self.key)
