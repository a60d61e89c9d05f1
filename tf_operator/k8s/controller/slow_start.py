"""Running many creates in slow-start batches (Kubernetes' ``slowStartBatch``).

The ReplicaSet and Job controllers create in batches of 1, 2, 4, ... run concurrently, and the
first batch with a failure ends the run: the rest are skipped, so a systematic error such as a
quota costs one request, not ten. Independent kinds of object are lanes, each with its own
slow start, and the lanes' batches of one round run together. v0.5.3 created one object after
another; the job controller's use of this is divergence D46 (docs/divergences.md).

:class:`SlowStartBatches` runs batches on a small shared thread pool (threads are made when
first needed). ``concurrent=False`` runs the same batches in order on the caller's thread,
which tests use to compare exact action lists.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)

# Creates in flight at once across all workers (client-go's burst of concurrent writes).
MAX_CONCURRENT_CREATES = 8
SLOW_START_INITIAL_BATCH_SIZE = 1


class SlowStartBatches:
    """Runs calls in batches of 1, 2, 4, ... until a batch fails; see the module docstring."""

    def __init__(self, concurrent: bool = True, workers: int = MAX_CONCURRENT_CREATES) -> None:
        self.concurrent = concurrent
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="create")
        return self._pool

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

    def _run_batch(self, batch: list[Callable[[], None]]) -> list[BaseException | None]:
        """Each call's error (None: it succeeded), in order."""
        if not self.concurrent or len(batch) == 1:
            return [_attempt(call) for call in batch]
        # The caller's thread runs the first call itself: one hand-off fewer per batch.
        futures = [self._executor().submit(_attempt, call) for call in batch[1:]]
        first = _attempt(batch[0])
        return [first, *(f.result() for f in futures)]

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)


def _attempt(call: Callable[[], None]) -> BaseException | None:
    try:
        call()
    except Exception as err:
        return err
    return None
