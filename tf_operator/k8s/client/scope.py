"""Deadline, cancellation and fence of the requests a thread makes: client-go's ``context``.

client-go passes a ``context.Context`` to every request; its deadline bounds the whole request,
the waits between Retry-After attempts included, and its cancellation ends those waits at once.
Python code here has no such argument, so the caller opens a :func:`request_scope` around a
block of calls instead (a :mod:`contextvars` variable: it applies to the calls this thread makes
inside the block, and never leaks into other threads):

- ``timeout``: every request of the block ends, answered or not, by then (the socket waits are
  cut to what is left, and a Retry-After wait that would outlast it is not begun);
- ``cancel``: an event that, once set, makes the requests of the block give up (a Retry-After
  wait wakes at once; no further attempt is sent);
- ``fence``: asked before every attempt to write (POST, PUT, PATCH, DELETE); False refuses the
  write. A leader uses it so that nothing it sends after its lease has run out reaches the
  server, however long a request waited before that attempt.

Scopes nest: the inner one keeps the earlier deadline, and the outer cancel event and fence
unless it names its own. Deadlines are ``time.monotonic()`` readings.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from tf_operator.k8s.client.errors import TransportError


class RequestAborted(TransportError):
    """A request given up by its scope before an answer (no attempt, or no further one)."""


class DeadlineExceeded(RequestAborted):
    """The scope's deadline passed (client-go: ``context.DeadlineExceeded``)."""


class RequestCancelled(RequestAborted):
    """The scope's cancel event was set (client-go: ``context.Canceled``)."""


class WriteFenced(RequestAborted):
    """The scope's fence refused a write."""


@dataclass(frozen=True)
class RequestScope:
    """What bounds the requests of one block; see the module docstring."""

    deadline: float | None = None
    cancel: threading.Event | None = None
    fence: Callable[[], bool] | None = None

    def remaining(self) -> float | None:
        """Seconds left before the deadline (never negative); None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def check(self, what: str, write: bool) -> None:
        """Raise if a request (attempt) for ``what`` may not be sent now."""
        if self.cancel is not None and self.cancel.is_set():
            raise RequestCancelled(f"{what}: cancelled")
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise DeadlineExceeded(f"{what}: deadline exceeded")
        if write and self.fence is not None and not self.fence():
            raise WriteFenced(f"{what}: refused by the write fence (the lease is not held)")

    def wait(self, seconds: float) -> bool:
        """Wait ``seconds`` unless cancelled first; True when cancelled."""
        if self.cancel is not None:
            return self.cancel.wait(seconds)
        if seconds > 0:
            time.sleep(seconds)
        return False


NO_SCOPE = RequestScope()
_current: ContextVar[RequestScope] = ContextVar("tf_operator_request_scope", default=NO_SCOPE)


def current_scope() -> RequestScope:
    """The scope of this thread's requests (one without bounds outside any block)."""
    return _current.get()


@contextlib.contextmanager
def request_scope(
    timeout: float | None = None,
    cancel: threading.Event | None = None,
    fence: Callable[[], bool] | None = None,
    deadline: float | None = None,
) -> Iterator[RequestScope]:
    """Bound the requests this thread makes in the block (``timeout`` seconds from now, or the
    monotonic ``deadline``; the earlier of the two and of any enclosing scope's)."""
    outer = _current.get()
    candidates = [d for d in (outer.deadline, deadline) if d is not None]
    if timeout is not None:
        candidates.append(time.monotonic() + timeout)
    scope = RequestScope(
        min(candidates) if candidates else None,
        cancel if cancel is not None else outer.cancel,
        fence if fence is not None else outer.fence,
    )
    token = _current.set(scope)
    try:
        yield scope
    finally:
        _current.reset(token)
