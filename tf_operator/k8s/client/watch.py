"""The client side of a watch: newline-delimited JSON events read lazily.

The API server answers ``?watch=true`` with a chunked body holding one JSON
object per line, ``{"type": ..., "object": ...}``. HTTP chunks and TCP reads
need not line up with events, so bytes are buffered until a newline. ERROR
events come out as ``("ERROR", status_dict)``; the reader decides what a
Status means. Another thread may call :meth:`WatchStream.close` at any time:
it shuts the socket down, which wakes a blocked reader, and iteration then ends
quietly. A connection that breaks while nobody asked for it raises
:class:`~tf_operator.k8s.client.errors.TransportError`.
"""

from __future__ import annotations

import http.client
import logging
import threading
from collections.abc import Iterator
from typing import Any

import orjson

from tf_operator.k8s.client import deepjson
from tf_operator.k8s.client.errors import TransportError
from tf_operator.k8s.client.transport import StreamingResponse

log = logging.getLogger(__name__)

_READ_SIZE = 64 * 1024


class WatchStream:
    """An iterator of ``(event_type, object)`` over one watch response."""

    def __init__(self, response: StreamingResponse) -> None:
        self._response = response
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._reading = False
        self._finished = False

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        return self._events()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        """Stop the stream; safe from any thread, and more than once."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
            reading = self._reading and not self._finished
        if reading:
            self._shutdown_socket()
        else:
            self._release()

    def __enter__(self) -> WatchStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _events(self) -> Iterator[tuple[str, dict[str, Any]]]:
        with self._lock:
            if self._closed.is_set():
                return
            self._reading = True
        buf = bytearray()
        try:
            for chunk in self._chunks():
                buf += chunk
                start = 0
                while True:
                    end = buf.find(b"\n", start)
                    if end < 0:
                        break
                    line = bytes(buf[start:end])
                    start = end + 1
                    if line.strip():
                        if self._closed.is_set():
                            return
                        yield _decode(line)
                del buf[:start]
            if bytes(buf).strip() and not self._closed.is_set():
                yield _decode(bytes(buf))
        except (http.client.HTTPException, OSError, ValueError) as exc:
            if self._closed.is_set():
                return
            raise TransportError(f"watch stream broken: {exc}") from exc
        finally:
            with self._lock:
                self._finished = True
            self._release()

    def _chunks(self) -> Iterator[bytes]:
        while not self._closed.is_set():
            data = self._response.read1(_READ_SIZE)
            if not data:
                return
            yield data

    def _shutdown_socket(self) -> None:
        try:
            self._response.shutdown()
        except Exception:  # the connection may already be gone
            log.debug("watch socket shutdown failed", exc_info=True)

    def _release(self) -> None:
        try:
            self._response.close()
        except Exception:
            log.debug("closing watch response failed", exc_info=True)


def _decode(line: bytes) -> tuple[str, dict[str, Any]]:
    try:
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError as err:
            if "depth limit" not in str(err):
                raise
            event = deepjson.loads(line)  # an object nested deeper than orjson goes
        return event["type"], event["object"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"undecodable watch event: {line[:200]!r}") from exc
