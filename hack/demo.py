"""``make demo``: runs the demo the arguments ask for (see :mod:`demokit`)."""

import sys

from demokit.cli import main

if __name__ == "__main__":
    sys.exit(main())
