"""What a paginated LIST page costs the API server emulator as objects grow: a door to :mod:`benchkit.suites.paging` (``make bench`` runs it)."""

import sys

from benchkit.suites.paging import main

if __name__ == "__main__":
    sys.exit(main())
