"""Running many creates in slow-start batches (Kubernetes' ``slowStartBatch``), off the caller.

The ReplicaSet and Job controllers create in batches of 1, 2, 4, ... run concurrently, and the
first batch with a failure ends the run: the rest are skipped, so a systematic error such as a
quota costs one request, not ten. An AlreadyExists is no such error: with deterministic names
it concerns that one object, and ending the lane on it would leave the creates after it
undone pass after pass (divergence D67); it is reported with the others but ends nothing. Independent kinds of object are lanes, each with its own
slow start, and the lanes' batches of one round run together. v0.5.3 created one object after
another; the job controller's use of this is divergence D46 (docs/divergences.md).

:meth:`SlowStartBatches.submit` hands a run to a pool of ``workers`` helper threads and returns
at once: the caller (a job controller's worker) does not wait for the round trips, so one worker
can go on computing other jobs while their creates are in flight. Each round's calls go onto one
queue shared by all runs, ordered by run: the oldest run's calls go first, so a job whose first
round is done finishes its slow start before later jobs take the helpers (with a plain FIFO, 200
jobs submitted at once would all wait for everyone's first round, then for everyone's second,
and all end together, late). The helper that ends a round's last call queues the next round, and
the helper that ends the run calls ``done`` with the errors of the failed batches and the calls
skipped after them (the caller raised an expectation for each when it queued them, and lowers
those of skipped calls). ``concurrent=False`` runs the same rounds in order on the caller's
thread before ``submit`` returns, which tests use to compare exact action lists.
:meth:`SlowStartBatches.shutdown` lets every submitted run finish before the helpers stop, as a
worker finishing its key did when the creates ran on it.
"""

from __future__ import annotations

import itertools
import logging
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from tf_operator.k8s.client import is_already_exists

log = logging.getLogger(__name__)

# Creates in flight at once across all workers (client-go's burst of concurrent writes).
MAX_CONCURRENT_CREATES = 8
SLOW_START_INITIAL_BATCH_SIZE = 1
# How long `shutdown` waits for submitted runs to finish.
DRAIN_TIMEOUT_SECONDS = 30.0

C = TypeVar("C", bound=Callable[[], object])


class SlowStartBatches(Generic[C]):
    """Runs lanes of calls in slow-start batches on helper threads; see the module docstring."""

    def __init__(self, concurrent: bool = True, workers: int = MAX_CONCURRENT_CREATES) -> None:
        self.concurrent = concurrent
        self._workers = workers
        # (run's number, slot, run); None as the run: stop
        self._tasks: queue.PriorityQueue[tuple[int, int, _Run[C] | None]] = queue.PriorityQueue()
        self._numbers = itertools.count()
        self._helpers: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._runs = 0  # submitted and not yet done

    def submit(
        self, lanes: Sequence[list[C]], done: Callable[[list[BaseException], list[C]], None]
    ) -> None:
        """Run each lane's calls in slow-start batches, the lanes side by side, then call
        ``done(errors, skipped)``. A lane stops after a failed batch; the others go on."""
        run = _Run(self, next(self._numbers), [lane for lane in lanes if lane], done)
        if not run.lanes:
            done([], [])
            return
        if not self.concurrent:
            while run.round:
                for slot in range(len(run.round)):
                    run.attempt(slot)
            return
        with self._lock:
            self._runs += 1
            self._start_helpers()
        run.queue_round()

    def _start_helpers(self) -> None:
        while len(self._helpers) < self._workers:
            helper = threading.Thread(
                target=self._help, name=f"create-{len(self._helpers)}", daemon=True
            )
            helper.start()
            self._helpers.append(helper)

    def _queue(self, run: _Run[C], slots: int) -> None:
        for slot in range(slots):
            self._tasks.put((run.number, slot, run))

    def _help(self) -> None:
        while True:
            _, slot, run = self._tasks.get()
            if run is None:
                return
            run.attempt(slot)

    def _run_done(self) -> None:
        with self._lock:
            self._runs -= 1
            if not self._runs:
                self._idle.notify_all()

    def shutdown(self, timeout: float = DRAIN_TIMEOUT_SECONDS) -> None:
        """Let the submitted runs finish (up to ``timeout``), then stop the helpers."""
        with self._lock:
            if not self._idle.wait_for(lambda: not self._runs, timeout):
                log.warning("slow start: %d run(s) still in flight at shutdown", self._runs)
            helpers, self._helpers = self._helpers, []
        for _ in helpers:
            self._tasks.put((sys.maxsize, 0, None))
        for helper in helpers:
            helper.join(timeout)


class _Run(Generic[C]):
    """One submitted run: its lanes, where each stands, and the round in flight."""

    def __init__(
        self,
        owner: SlowStartBatches[C],
        number: int,
        lanes: list[list[C]],
        done: Callable[[list[BaseException], list[C]], None],
    ) -> None:
        self._owner = owner
        self.number = number
        self.lanes = lanes
        self._done = done
        self._sizes = [SLOW_START_INITIAL_BATCH_SIZE] * len(lanes)
        self._starts = [0] * len(lanes)
        self._live = list(range(len(lanes)))
        self._errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._next_round()

    def _next_round(self) -> None:
        """The calls of the live lanes' next batches, lane after lane."""
        self._batches = [
            (i, self.lanes[i][self._starts[i] : self._starts[i] + self._sizes[i]])
            for i in self._live
        ]
        self.round: list[C] = [call for _, batch in self._batches for call in batch]
        self._results: list[BaseException | None] = [None] * len(self.round)
        self._left = len(self.round)

    def queue_round(self) -> None:
        self._owner._queue(self, len(self.round))

    def attempt(self, slot: int) -> None:
        """Run one call of the current round; the last one to end moves the run on."""
        try:
            self.round[slot]()
        except Exception as err:
            self._results[slot] = err
        with self._lock:
            self._left -= 1
            if self._left:
                return
        self._end_round()

    def _end_round(self) -> None:
        results = self._results
        for i, batch in self._batches:
            failed = [err for err in results[: len(batch)] if err is not None]
            results = results[len(batch) :]
            self._starts[i] += len(batch)
            self._sizes[i] *= 2
            self._errors += failed
            ends = any(not is_already_exists(err) for err in failed)
            if ends or self._starts[i] >= len(self.lanes[i]):
                self._live.remove(i)
        self._next_round()
        if self.round:
            if self._owner.concurrent:
                self.queue_round()
            return
        skipped = [call for i, lane in enumerate(self.lanes) for call in lane[self._starts[i] :]]
        if skipped:
            log.debug("slow start: %d create(s) skipped after a failure", len(skipped))
        try:
            self._done(self._errors, skipped)
        except Exception:
            log.exception("slow start: the done callback failed")
        finally:
            if self._owner.concurrent:
                self._owner._run_done()
