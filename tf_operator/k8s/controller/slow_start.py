"""Running many creates in slow-start batches (Kubernetes' ``slowStartBatch``).

The ReplicaSet and Job controllers create in batches of 1, 2, 4, ... run concurrently, and the
first batch with a failure ends the run: the rest are skipped, so a systematic error such as a
quota costs one request, not ten. Independent kinds of object are lanes, each with its own
slow start, and the lanes' batches of one round run together. v0.5.3 created one object after
another; the job controller's use of this is divergence D46 (docs/divergences.md).

:class:`SlowStartBatches` shares out each batch between the caller's thread and helper threads
it wakes (made when first needed, at most ``workers``): everyone takes the batch's next call
until none is left, and the caller waits once, for the last call to end. Unlike a
``ThreadPoolExecutor`` there is no ``Future`` per call and no wake-up per result, and a helper
that wakes late finds the calls already taken and goes back to sleep; helpers only speed a
batch up, the caller would run it all by itself. ``concurrent=False`` runs the same batches in
order on the caller's thread, which tests use to compare exact action lists.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

# Creates in flight at once across all workers (client-go's burst of concurrent writes).
MAX_CONCURRENT_CREATES = 8
SLOW_START_INITIAL_BATCH_SIZE = 1


class SlowStartBatches:
    """Runs calls in batches of 1, 2, 4, ... until a batch fails; see the module docstring."""

    def __init__(self, concurrent: bool = True, workers: int = MAX_CONCURRENT_CREATES) -> None:
        self.concurrent = concurrent
        self._workers = workers
        self._batches: queue.SimpleQueue[_Batch | None] = queue.SimpleQueue()
        self._helpers: list[threading.Thread] = []
        self._lock = threading.Lock()

    def run(self, *lanes: list[Callable[[], None]]) -> list[BaseException]:
        """Run each lane's calls in slow-start batches, the lanes side by side; the errors of
        each lane's failed batch (none if all succeeded). A lane stops after a failed batch;
        the other lanes go on."""
        sizes = [SLOW_START_INITIAL_BATCH_SIZE] * len(lanes)
        starts = [0] * len(lanes)
        live = [bool(lane) for lane in lanes]
        errors: list[BaseException] = []
        while any(live):
            batches = [
                (i, lanes[i][starts[i] : starts[i] + sizes[i]])
                for i in range(len(lanes))
                if live[i]
            ]
            results = self._run_batch([call for _, batch in batches for call in batch])
            for i, batch in batches:
                failed = [err for err in results[: len(batch)] if err is not None]
                results = results[len(batch) :]
                starts[i] += len(batch)
                sizes[i] *= 2
                if failed:
                    errors += failed
                    skipped = len(lanes[i]) - starts[i]
                    if skipped:
                        log.debug("slow start: %d create(s) skipped after a failure", skipped)
                    live[i] = False
                elif starts[i] >= len(lanes[i]):
                    live[i] = False
        return errors

    def _run_batch(self, calls: list[Callable[[], None]]) -> list[BaseException | None]:
        """Each call's error (None: it succeeded), in order."""
        if not self.concurrent or len(calls) == 1:
            return [_attempt(call) for call in calls]
        batch = _Batch(calls)
        self._wake_helpers(batch, min(len(calls) - 1, self._workers))
        batch.work()
        batch.wait()
        return batch.errors

    def _wake_helpers(self, batch: _Batch, count: int) -> None:
        with self._lock:
            while len(self._helpers) < count:
                helper = threading.Thread(
                    target=self._help, name=f"create-{len(self._helpers)}", daemon=True
                )
                helper.start()
                self._helpers.append(helper)
        for _ in range(count):
            self._batches.put(batch)

    def _help(self) -> None:
        while (batch := self._batches.get()) is not None:
            batch.work()

    def shutdown(self) -> None:
        with self._lock:
            helpers, self._helpers = self._helpers, []
        for _ in helpers:
            self._batches.put(None)
        for helper in helpers:
            helper.join()


class _Batch:
    """The calls of one batch, taken one at a time by whoever is free; see the module
    docstring."""

    __slots__ = ("_calls", "errors", "_next", "_left", "_lock", "_done")

    def __init__(self, calls: list[Callable[[], None]]) -> None:
        self._calls = calls
        self.errors: list[BaseException | None] = [None] * len(calls)
        self._next = 0
        self._left = len(calls)
        self._lock = threading.Lock()
        self._done = threading.Lock()  # held until the last call ends
        self._done.acquire()

    def work(self) -> None:
        """Run this batch's untaken calls, one after another, until none is left."""
        while True:
            with self._lock:
                index = self._next
                if index >= len(self._calls):
                    return
                self._next = index + 1
            self.errors[index] = _attempt(self._calls[index])
            with self._lock:
                self._left -= 1
                last = self._left == 0
            if last:
                self._done.release()

    def wait(self) -> None:
        """Until every call has ended."""
        self._done.acquire()


def _attempt(call: Callable[[], None]) -> BaseException | None:
    try:
        call()
    except Exception as err:
        return err
    return None
