"""Children that do not outlive the process that started them.

The local cluster's processes (etcd, kube-apiserver, the cluster CLI, a demo's operator) are
started in sessions of their own so that a Ctrl-C reaches their parent only and the parent can
stop them in order. The price is that a parent killed outright (SIGKILL, a test's timeout)
leaves them running. ``bound_to_parent`` closes that gap: the command is run under util-linux's
``setpriv --pdeathsig TERM``, so the kernel sends it SIGTERM when its parent dies, and it stops
as it would on Ctrl-C.

Linux delivers the parent-death signal when the *thread* that forked the child ends: start
bound children from a thread that lives as long as they should (the main thread, as here).
"""

from __future__ import annotations

import functools
import shutil


@functools.cache
def _setpriv() -> str | None:
    return shutil.which("setpriv")


def bound_to_parent(argv: list[str]) -> list[str]:
    """``argv`` run so that it gets SIGTERM when its parent dies; ``argv`` unchanged where
    ``setpriv`` is missing (the child then outlives a killed parent, as before)."""
    setpriv = _setpriv()
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else list(argv)
