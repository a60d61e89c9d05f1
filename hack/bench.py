"""``make bench``: runs every ``hack/bench_*.py`` and writes the report (see :mod:`benchkit.driver`)."""

import sys

from benchkit.driver import main

if __name__ == "__main__":
    sys.exit(main())
