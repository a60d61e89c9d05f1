"""Per-thread CPU of a benchmarked Python process, for ``bench_operator.py --thread-cpu``.

The harness puts this directory first on the subject's ``PYTHONPATH`` and names a file in
``BENCHKIT_THREAD_CPU``; Python then imports this module at start-up, before the subject's own
code. From then on a daemon thread writes ``{thread name: CPU seconds}`` of every thread, the
ended ones included, to that file every 0.5 s (the harness waits for the first write after it
asks, while the subject is idle before and after the measured part). Linux thread CPU
clocks are read from outside each thread, so the subject's threads are not touched. Without
the variable nothing happens.
"""

from __future__ import annotations

import json
import os
import threading
import time

_PATH = os.environ.get("BENCHKIT_THREAD_CPU", "")


def _start() -> None:
    ended: dict[str, float] = {}
    lock = threading.Lock()
    bootstrap = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def run_and_count(self: threading.Thread) -> None:
        try:
            bootstrap(self)
        finally:
            spent = time.thread_time()
            with lock:
                ended[self.name] = ended.get(self.name, 0.0) + spent

    threading.Thread._bootstrap_inner = run_and_count  # type: ignore[attr-defined]

    def snapshot() -> dict[str, float]:
        with lock:
            seconds = dict(ended)
        for thread in threading.enumerate():
            if thread.ident is None:
                continue
            try:
                spent = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
            except OSError:  # ended since enumerate
                continue
            seconds[thread.name] = seconds.get(thread.name, 0.0) + spent
        return seconds

    def write_forever() -> None:
        partial = f"{_PATH}.partial"
        while True:
            with open(partial, "w") as out:
                json.dump(snapshot(), out)
            os.replace(partial, _PATH)
            time.sleep(0.5)

    threading.Thread(target=write_forever, name="benchkit-thread-cpu", daemon=True).start()


if _PATH:
    _start()
