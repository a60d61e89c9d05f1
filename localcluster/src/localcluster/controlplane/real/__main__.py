"""``python -m localcluster.controlplane.real``: build the real control plane's binaries now.

Prints the build's progress and the binaries' directory; a second run returns at once. Exit
status 2 with a sentence when Go or the Go module proxy is missing.
"""

from __future__ import annotations

import logging
import sys

from localcluster.controlplane.real.build import ControlPlaneUnavailable, ensure_binaries


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    try:
        binaries = ensure_binaries()
    except ControlPlaneUnavailable as err:
        sys.stderr.write(f"{err}\n")
        return 2
    sys.stdout.write(f"{binaries.directory}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
