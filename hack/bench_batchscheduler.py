"""The batch scheduler (Volcano flavour) at scale: a door to :mod:`benchkit.suites.batchscheduler` (``make bench`` runs it)."""

import sys

from benchkit.suites.batchscheduler import main

if __name__ == "__main__":
    sys.exit(main())
