"""parallelize: every piece once, bounded threads, failures isolated."""

import threading
from collections import Counter

from tf_operator.k8s.workqueue import parallelize


def test_every_piece_runs_once_on_at_most_workers_threads():
    seen = Counter()
    threads = set()
    lock = threading.Lock()

    def piece(i):
        with lock:
            seen[i] += 1
            threads.add(threading.get_ident())

    parallelize(3, 100, piece)
    assert seen == Counter(range(100))
    assert 1 <= len(threads) <= 3


def test_failing_piece_does_not_stop_others_and_no_pieces_is_noop():
    done = []

    def piece(i):
        if i == 2:
            raise RuntimeError("boom")
        done.append(i)

    parallelize(8, 5, piece)
    assert sorted(done) == [0, 1, 3, 4]
    parallelize(4, 0, piece)
