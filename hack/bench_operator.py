"""The operator benchmarks (burst, scaling, steady load, memory, start-up, the real control plane): a door to :mod:`benchkit.suites.operator` (``make bench`` runs it)."""

import sys

from benchkit.suites.operator import main

if __name__ == "__main__":
    sys.exit(main())
