"""Run a function over piece indexes 0..pieces-1 on a few threads, and wait for all.

A crash in one piece is logged and does not stop the other pieces (client-go recovers
panics the same way).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


def parallelize(workers: int, pieces: int, do_work_piece: Callable[[int], None]) -> None:
    """Call `do_work_piece(i)` for every i in range(pieces), on at most `workers` threads."""
    if pieces <= 0:
        return
    next_piece = iter(range(pieces))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                piece = next(next_piece, None)
            if piece is None:
                return
            try:
                do_work_piece(piece)
            except Exception:
                log.exception("work piece %d failed", piece)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(min(workers, pieces))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
