"""Container logs as lines.

:class:`LogStream` reads one ``pods/{name}/log`` response line by line as the kubelet sends it
(with ``follow=true`` the API server keeps the response open until the container exits).
Another thread may :meth:`~LogStream.close` it at any time: that shuts the socket down, which
wakes a blocked reader. Following a whole job, through restarts, is :mod:`.follow`'s.
"""

from __future__ import annotations

import http.client
import logging
import threading
from collections.abc import Iterator
from typing import Any, NamedTuple

from tf_operator.k8s.client.errors import TransportError

log = logging.getLogger(__name__)

_READ_SIZE = 64 * 1024


class LogLine(NamedTuple):
    pod: str
    line: str


class LogStream:
    """The lines of one container log response, decoded as UTF-8 (invalid bytes replaced)."""

    def __init__(self, pod: str, response: Any) -> None:
        self.pod = pod
        self._response = response
        self._closed = threading.Event()

    def __iter__(self) -> Iterator[str]:
        buf = b""
        try:
            while not self._closed.is_set():
                data = self._response.read1(_READ_SIZE)
                if not data:
                    break
                buf += data
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    yield line.decode("utf-8", "replace")
            if buf and not self._closed.is_set():
                yield buf.decode("utf-8", "replace")
        except (http.client.HTTPException, OSError, ValueError) as exc:
            if not self._closed.is_set():
                raise TransportError(f"log stream of {self.pod} broken: {exc}") from exc
        finally:
            self._release()

    def close(self) -> None:
        """End the stream; safe from any thread, and more than once."""
        if self._closed.is_set():
            return
        self._closed.set()
        shutdown = getattr(self._response, "shutdown", None)
        try:
            if shutdown is not None:
                shutdown()
        except Exception:  # the connection may already be gone
            log.debug("log socket shutdown failed", exc_info=True)
        self._release()

    def _release(self) -> None:
        try:
            self._response.release_conn()
        except Exception:
            log.debug("releasing log response failed", exc_info=True)
