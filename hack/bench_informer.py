"""A pod informer over 10,000 pods: how fast, how lean: a door to :mod:`benchkit.suites.informer` (``make bench`` runs it)."""

import sys

from benchkit.suites.informer import main

if __name__ == "__main__":
    sys.exit(main())
