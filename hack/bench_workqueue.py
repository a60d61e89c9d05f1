"""Workqueue throughput: one producer, N workers: a door to :mod:`benchkit.suites.workqueue` (``make bench`` runs it)."""

import sys

from benchkit.suites.workqueue import main

if __name__ == "__main__":
    sys.exit(main())
