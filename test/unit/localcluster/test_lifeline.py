"""A child started ``bound_to_parent`` ends when its parent is killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from localcluster.lifeline import bound_to_parent
from localcluster.testing import wait_for

# The parent starts a long sleeper bound to it, in a session of its own (as the local cluster
# starts its processes), prints the sleeper's pid and waits.
PARENT = textwrap.dedent(
    """
    import subprocess, sys
    from localcluster.lifeline import bound_to_parent
    argv = bound_to_parent([sys.executable, "-c", "import time; time.sleep(600)"])
    child = subprocess.Popen(argv, start_new_session=True)
    print(child.pid, flush=True)
    child.wait()
    """
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (ended, not yet reaped by init) counts as ended
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] != "Z"


def start_and_kill_parent() -> int:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    return child


@pytest.mark.skipif(bound_to_parent(["x"]) == ["x"], reason="setpriv is not installed")
def test_a_bound_child_ends_with_its_killed_parent() -> None:
    child = start_and_kill_parent()
    try:
        wait_for(lambda: not alive(child), 10, what="the child ends")
    finally:
        if alive(child):  # the lifeline failed: leave nothing running
            os.kill(child, signal.SIGKILL)


def test_without_setpriv_the_command_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    from localcluster import lifeline

    monkeypatch.setattr(lifeline, "_setpriv", lambda: None)
    assert lifeline.bound_to_parent(["a", "b"]) == ["a", "b"]
