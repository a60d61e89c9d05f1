"""The API server emulator's creates/s and gets/s with open watches: a door to :mod:`benchkit.suites.apiserver` (``make bench`` runs it)."""

import sys

from benchkit.suites.apiserver import main

if __name__ == "__main__":
    sys.exit(main())
