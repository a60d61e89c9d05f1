"""Several controllers run as one: a thread each, stopped together, failing together.

The process runs one controller per enabled job kind (``--enable-scheme``) over shared
informers. :class:`ControllerGroup` runs like one controller: ``run`` returns once every
member drained after the stop event; when a member ends on its own (its caches never synced,
it crashed), the others are stopped and drained too and ``run`` raises, so the process gives
up its leadership rather than run some kinds and not others. With one member it is that
member, run on the caller's thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Protocol

log = logging.getLogger(__name__)


class Controller(Protocol):
    def run(self, threadiness: int, stop_event: threading.Event) -> None: ...


class ControllerStoppedError(RuntimeError):
    """A member of the group ended before it was asked to stop."""


class ControllerGroup:
    """Named controllers run together; see the module docstring."""

    def __init__(self, members: Sequence[tuple[str, Controller]]) -> None:
        self.members = list(members)

    def run(self, threadiness: int, stop_event: threading.Event) -> None:
        if len(self.members) == 1:
            self.members[0][1].run(threadiness, stop_event)
            return
        inner = threading.Event()  # stops every member: the caller's stop, or a failure
        failures: list[tuple[str, BaseException | None]] = []
        lock = threading.Lock()

        def run_member(name: str, controller: Controller) -> None:
            error: BaseException | None = None
            try:
                controller.run(threadiness, inner)
            except Exception as err:
                error = err
            if not inner.is_set():
                with lock:
                    failures.append((name, error))
                inner.set()

        threads = [
            threading.Thread(target=run_member, args=member, name=f"{member[0]}-controller")
            for member in self.members
        ]
        for thread in threads:
            thread.start()
        while not inner.wait(0.2):
            if stop_event.is_set():
                inner.set()
        for thread in threads:
            thread.join()
        if failures:
            name, error = failures[0]
            if error is not None:
                raise ControllerStoppedError(f"the {name} controller failed: {error}") from error
            raise ControllerStoppedError(f"the {name} controller stopped unexpectedly")
