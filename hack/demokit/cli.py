"""``make demo [ARGS=...]``: which demo the arguments ask for.

``--gang [FLAVOUR]`` runs :mod:`demokit.gang`, ``--in-cluster`` runs :mod:`demokit.incluster`,
``--queue`` runs :mod:`demokit.queue`, ``--pytorch`` runs :mod:`demokit.pytorchjob`,
``--xgboost``, ``--jax`` and ``--paddle`` run :mod:`demokit.kinds`, anything else
:mod:`demokit.tfjob` (each parses its own arguments). ``--real``, with any of them, runs the
local cluster on the real control plane (etcd and Kubernetes' own servers, built from Go
modules on first need, with the build's progress shown here) instead of the emulator.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--real" in argv:
        from demokit.harness import DemoError, use_real_control_plane

        argv = [a for a in argv if a != "--real"]
        try:
            use_real_control_plane()
        except DemoError as err:
            print(f"make demo ARGS=--real: {err}", file=sys.stderr)
            return 2
    if any(a == "--gang" or a.startswith("--gang=") for a in argv):
        from demokit import gang

        return gang.main(argv)
    if "--queue" in argv:
        from demokit import queue

        return queue.main(argv)
    if "--pytorch" in argv:
        from demokit import pytorchjob

        return pytorchjob.main(argv)
    if any(a in ("--xgboost", "--jax", "--paddle") for a in argv):
        from demokit import kinds

        return kinds.main(argv)
    if "--in-cluster" in argv:
        from demokit import incluster

        return incluster.main([a for a in argv if a != "--in-cluster"])
    from demokit import tfjob

    return tfjob.main(argv)
